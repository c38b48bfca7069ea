//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/collio/collio/hints"
)

// The per-path hints configuration (COLLIO_HINTS_CONFIG names it), after
// E10's MPIWRAP idea: unmodified programs get hints chosen per file or
// directory without a code change. The format is collio's own:
//
//	{
//	  "passthrough": ["/home/"],
//	  "rules": [
//	    {"prefix": "/scratch/", "hints": {"cb_buffer_size": "16m"}},
//	    {"directory": "/scratch/run1", "hints": {"cb_nodes": "2"}},
//	    {"path": "/scratch/run1/restart.dat", "hints": {"romio_cb_write": "enable"}},
//	    {"prefix": "/nfs/", "passthrough": true}
//	  ]
//	}
//
// A rule has exactly one of "path" (the file's absolute path), "directory"
// (the directory the file is directly in) or "prefix" (a string prefix of
// the absolute path), plus "hints" and/or "passthrough". Every matching rule
// applies, from the least to the most specific: prefix rules by increasing
// length, then the directory rule, then the path rule; a later one's hints
// replace an earlier one's for the same key. Config hints override the
// program's own MPI_Info hints unless the rule says "override": false.
type config struct {
	Passthrough []string `json:"passthrough"`
	Rules       []rule   `json:"rules"`
}

type rule struct {
	Path        string            `json:"path"`
	Directory   string            `json:"directory"`
	Prefix      string            `json:"prefix"`
	Hints       map[string]string `json:"hints"`
	Passthrough bool              `json:"passthrough"`
	Override    *bool             `json:"override"`
}

// specificity orders matching rules: prefixes by length, then directory,
// then path.
func (r rule) specificity() int {
	switch {
	case r.Path != "":
		return 1 << 30
	case r.Directory != "":
		return 1<<30 - 1
	}
	return len(r.Prefix)
}

func (r rule) matches(abs string) bool {
	switch {
	case r.Path != "":
		return abs == r.Path
	case r.Directory != "":
		return filepath.Dir(abs) == r.Directory
	}
	return strings.HasPrefix(abs, r.Prefix)
}

// loaded caches the configuration per value of COLLIO_HINTS_CONFIG.
var loaded struct {
	sync.Mutex
	name string
	cfg  *config
}

// loadConfig reads the file COLLIO_HINTS_CONFIG names (nil if unset or
// unusable; problems are warned about once, on world rank 0).
func loadConfig() *config {
	name := strings.TrimSpace(getenv("COLLIO_HINTS_CONFIG"))
	loaded.Lock()
	defer loaded.Unlock()
	if name == loaded.name {
		return loaded.cfg
	}
	loaded.name, loaded.cfg = name, nil
	if name == "" {
		return nil
	}
	cfg, err := parseConfig(name)
	if err != nil {
		warnOnce(worldRank(), fmt.Sprintf("COLLIO_HINTS_CONFIG=%s ignored: %v", name, err))
		return nil
	}
	loaded.cfg = cfg
	return cfg
}

func parseConfig(name string) (*config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return decodeConfig(data)
}

// decodeConfig parses and checks a configuration: one JSON object, nothing
// after it.
func decodeConfig(data []byte) (*config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cfg config
	if err := dec.Decode(&cfg); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the configuration object at byte %d", dec.InputOffset())
	}
	for i, r := range cfg.Rules {
		n := 0
		for _, s := range []string{r.Path, r.Directory, r.Prefix} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("rule %d must have exactly one of \"path\", \"directory\", \"prefix\"", i+1)
		}
		if r.Path != "" {
			cfg.Rules[i].Path = filepath.Clean(r.Path)
		}
		if r.Directory != "" {
			cfg.Rules[i].Directory = filepath.Clean(r.Directory)
		}
	}
	return &cfg, nil
}

// absPath is the path the rules and pass-through prefixes are matched
// against: absolute and clean, without a driver prefix such as "ufs:".
func absPath(path string) string {
	if i := strings.IndexByte(path, ':'); i > 1 && !strings.ContainsRune(path[:i], '/') {
		path = path[i+1:]
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// matching returns the rules that apply to path, least specific first.
func (c *config) matching(path string) []rule {
	if c == nil {
		return nil
	}
	abs := absPath(path)
	var out []rule
	for _, r := range c.Rules {
		if r.matches(abs) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].specificity() < out[j].specificity() })
	return out
}

// passthrough reports whether path goes to the host MPI-IO: its absolute
// path starts with a prefix of COLLIO_PASSTHROUGH (colon-separated) or of
// the config's "passthrough" list, or a matching rule says so.
func passthrough(path string) bool {
	abs := absPath(path)
	cfg := loadConfig()
	prefixes := strings.Split(getenv("COLLIO_PASSTHROUGH"), ":")
	if cfg != nil {
		prefixes = append(prefixes, cfg.Passthrough...)
	}
	for _, p := range prefixes {
		if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(abs, p) {
			return true
		}
	}
	for _, r := range cfg.matching(path) {
		if r.Passthrough {
			return true
		}
	}
	return false
}

// openHints merges the program's hints with the config's for path.
func openHints(path string, user map[string]string) map[string]string {
	out := make(map[string]string, len(user))
	rules := loadConfig().matching(path)
	// Rules that do not override go under the program's hints.
	for _, r := range rules {
		if r.Override != nil && !*r.Override {
			for k, v := range r.Hints {
				out[k] = v
			}
		}
	}
	for k, v := range user {
		out[k] = v
	}
	for _, r := range rules {
		if r.Override == nil || *r.Override {
			for k, v := range r.Hints {
				out[k] = v
			}
		}
	}
	return out
}

// filterHints drops the hints whose values collio rejects, warning once
// per distinct problem on rank 0: MPI-IO implementations ignore bad hints,
// so the program goes on with the default.
func filterHints(in map[string]string, rank int) map[string]string {
	out := make(map[string]string, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		if spec, ok := hints.Lookup(strings.TrimSpace(k)); ok {
			if _, err := hints.Normalize(spec, strings.TrimSpace(v)); err != nil {
				warnOnce(rank, fmt.Sprintf("%v (ignored: the default is used)", err))
				continue
			}
		}
		out[k] = v
	}
	return out
}

var warned struct {
	sync.Mutex
	seen map[string]bool
}

// warnOnce prints msg on stderr if rank is 0 and it was not printed before.
func warnOnce(rank int, msg string) {
	if rank != 0 {
		return
	}
	warned.Lock()
	defer warned.Unlock()
	if warned.seen == nil {
		warned.seen = make(map[string]bool)
	}
	if warned.seen[msg] {
		return
	}
	warned.seen[msg] = true
	fmt.Fprintf(os.Stderr, "collio: warning: %s\n", msg)
}
