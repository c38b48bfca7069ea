//go:build cgo

package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeConfig: any COLLIO_HINTS_CONFIG file gives an error or a
// configuration whose every rule has exactly one clean selector, that
// matches paths without panicking, and that survives a round trip through
// JSON. Seeds: testdata/fuzz/FuzzDecodeConfig.
func FuzzDecodeConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		cfg, err := decodeConfig(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for i, r := range cfg.Rules {
			n := 0
			for _, s := range []string{r.Path, r.Directory, r.Prefix} {
				if s != "" {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("rule %d has %d selectors: %+v", i, n, r)
			}
			if r.Path != "" && filepath.Clean(r.Path) != r.Path || r.Directory != "" && filepath.Clean(r.Directory) != r.Directory {
				t.Fatalf("rule %d not clean: %+v", i, r)
			}
		}
		rules := cfg.matching(path)
		for i := 1; i < len(rules); i++ {
			if rules[i-1].specificity() > rules[i].specificity() {
				t.Fatalf("matching rules out of order: %+v", rules)
			}
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeConfig(out)
		if err != nil || !reflect.DeepEqual(again, cfg) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", out, again, err, cfg)
		}
	})
}

func TestDecodeConfigTrailingData(t *testing.T) {
	for _, text := range []string{`{"rules": []} {"rules": [{"prefix": "/"}]}`, `{} x`, "{}\n]"} {
		_, err := decodeConfig([]byte(text))
		if err == nil || !strings.Contains(err.Error(), "after the configuration object") {
			t.Errorf("%q: %v", text, err)
		}
	}
	if _, err := decodeConfig([]byte("{}\n\t ")); err != nil {
		t.Errorf("trailing space: %v", err)
	}
}
