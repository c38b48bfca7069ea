//go:build cgo

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "hints.json")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestConfigPrecedence(t *testing.T) {
	name := writeConfig(t, `{"rules": [
		{"path": "/s/run/out.dat", "hints": {"a": "path"}},
		{"prefix": "/s/", "hints": {"a": "short", "b": "short", "c": "short"}},
		{"directory": "/s/run/", "hints": {"a": "dir", "b": "dir"}},
		{"prefix": "/s/run", "hints": {"c": "long"}},
		{"prefix": "/s/", "override": false, "hints": {"d": "default", "e": "default"}},
		{"prefix": "/t/", "hints": {"a": "other"}}
	]}`)
	cfg, err := parseConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.matching("/s/run/out.dat")); n != 5 {
		t.Fatalf("%d rules match, want 5", n)
	}
	t.Setenv("COLLIO_HINTS_CONFIG", name)
	got := openHints("/s/run/out.dat", map[string]string{"a": "user", "e": "user", "f": "user"})
	want := map[string]string{"a": "path", "b": "dir", "c": "long", "d": "default", "e": "user", "f": "user"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hints for out.dat: %v, want %v", got, want)
	}
	// The directory rule is about the file's own directory only.
	got = openHints("/s/run/sub/x", nil)
	want = map[string]string{"a": "short", "b": "short", "c": "long", "d": "default", "e": "default"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hints for sub/x: %v, want %v", got, want)
	}
	if got := openHints("/u/x", map[string]string{"a": "user"}); !reflect.DeepEqual(got, map[string]string{"a": "user"}) {
		t.Errorf("no rule: %v", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, text := range []string{
		`{"rules": [{"hints": {"a": "b"}}]}`,
		`{"rules": [{"path": "/a", "prefix": "/b"}]}`,
		`{"rules": [{"path": "/a", "hint": {}}]}`,
		`{"rules": [`,
	} {
		if _, err := parseConfig(writeConfig(t, text)); err == nil {
			t.Errorf("%s: no error", text)
		}
	}
	if _, err := parseConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestPassthrough(t *testing.T) {
	t.Setenv("COLLIO_HINTS_CONFIG", writeConfig(t, `{"passthrough": ["/home/"],
		"rules": [{"directory": "/nfs/x", "passthrough": true}, {"prefix": "/nfs/", "hints": {"a": "b"}}]}`))
	t.Setenv("COLLIO_PASSTHROUGH", "/p1/:/p2")
	for path, want := range map[string]bool{
		"/home/u/f": true, "/p1/f": true, "/p2x/f": true, "/p1": false, "/nfs/x/f": true,
		"/nfs/y/f": false, "/scratch/f": false, "ufs:/p1/f": true, "/p1/../q/f": false,
	} {
		if got := passthrough(path); got != want {
			t.Errorf("passthrough(%q) = %v, want %v", path, got, want)
		}
	}
	wd, _ := os.Getwd()
	t.Setenv("COLLIO_PASSTHROUGH", wd)
	if !passthrough("relative.dat") {
		t.Error("relative paths are matched as absolute paths")
	}
}

func TestFilterHints(t *testing.T) {
	in := map[string]string{"cb_buffer_size": "4m", "cb_nodes": "banana", "romio_cb_write": "ENABLE", "unknown_key": "x"}
	got := filterHints(in, 1)
	want := map[string]string{"cb_buffer_size": "4m", "romio_cb_write": "ENABLE", "unknown_key": "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("filterHints: %v, want %v", got, want)
	}
}

func TestNativeRep(t *testing.T) {
	for rep, want := range map[string]bool{"native": true, "NATIVE": true, "internal": true, "external32": false, "": false} {
		if nativeRep(rep) != want {
			t.Errorf("nativeRep(%q) = %v", rep, !want)
		}
	}
	if !strings.HasPrefix(absPath("ufs:/a/b"), "/a/b") {
		t.Errorf("absPath(ufs:/a/b) = %s", absPath("ufs:/a/b"))
	}
}
