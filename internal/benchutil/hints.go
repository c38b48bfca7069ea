// Package benchutil holds what collio's benchmark commands (collperf,
// iorbench, patterns) share: hint flags, the JSON result schema and its
// reduction over ranks, printed tables, progress lines, memory and file
// system probes, and one file interface over collio and the host MPI-IO.
package benchutil

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode"
)

// HintSet collects the hints of the -hints, -hint and -hintfile flags in
// command-line order: a key given again replaces the earlier value, so later
// sources win.
type HintSet struct {
	Vals   map[string]string
	Source map[string]string // where each value came from, for messages
}

func NewHintSet() *HintSet {
	return &HintSet{Vals: map[string]string{}, Source: map[string]string{}}
}

func (s *HintSet) Set(k, v, src string) {
	s.Vals[k] = v
	s.Source[k] = src
}

// CheckHint rejects keys and values that no MPI_Info can hold or that are
// surely typing mistakes (spaces inside a key, an empty value).
func CheckHint(k, v string) error {
	if k == "" {
		return fmt.Errorf("empty key")
	}
	if strings.ContainsFunc(k, func(r rune) bool { return unicode.IsSpace(r) || r == '=' || r == ',' || r == '#' }) {
		return fmt.Errorf("key %q contains a space, '=', ',' or '#'", k)
	}
	if v == "" {
		return fmt.Errorf("hint %q has an empty value", k)
	}
	if strings.ContainsAny(v, "\n\r") {
		return fmt.Errorf("value of %q contains a line break", k)
	}
	return nil
}

// ParseHintPair parses one -hint argument, key=value (the value may itself
// contain '=' and ',').
func ParseHintPair(kv string) (string, string, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return "", "", fmt.Errorf("%q is not key=value", kv)
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if err := CheckHint(k, v); err != nil {
		return "", "", fmt.Errorf("%q: %w", kv, err)
	}
	return k, v, nil
}

// ParseHintList parses a -hints argument, key=value,key=value. A piece
// without '=' continues the previous value, so list-valued hints can be
// written inline: cb_config_list=n1:1,n2:1,cb_nodes=2 gives cb_config_list
// "n1:1,n2:1" and cb_nodes "2".
func ParseHintList(list string) ([][2]string, error) {
	var out [][2]string
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("empty list")
	}
	for _, piece := range strings.Split(list, ",") {
		if !strings.Contains(piece, "=") {
			if len(out) == 0 {
				return nil, fmt.Errorf("%q: %q is not key=value", list, piece)
			}
			if strings.TrimSpace(piece) == "" {
				return nil, fmt.Errorf("%q: empty item", list)
			}
			out[len(out)-1][1] += "," + strings.TrimSpace(piece)
			continue
		}
		k, v, err := ParseHintPair(piece)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", list, err)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// ParseHintFile parses a hint file in ROMIO's ROMIO_HINTS format: one
// "key value" pair per line, separated by blanks; blank lines and comments
// (from a '#' at the start of a line or after a blank to the end of the
// line) are ignored. Errors name the line.
func ParseHintFile(r io.Reader, name string) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := stripComment(sc.Text())
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case len(f) == 1 && strings.Contains(f[0], "="):
			return nil, fmt.Errorf("%s:%d: %q: the format is \"key value\", not key=value", name, n, f[0])
		case len(f) == 1:
			return nil, fmt.Errorf("%s:%d: key %q has no value", name, n, f[0])
		case len(f) > 2:
			return nil, fmt.Errorf("%s:%d: %q: want \"key value\" (values cannot contain blanks)", name, n, strings.TrimSpace(line))
		}
		if err := CheckHint(f[0], f[1]); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, [2]string{f[0], f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// stripComment cuts a line at a '#' that starts it or follows a blank.
func stripComment(line string) string {
	for i, r := range line {
		if r == '#' && (i == 0 || unicode.IsSpace(rune(line[i-1]))) {
			return line[:i]
		}
	}
	return line
}

func ReadHintFile(path string) ([][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseHintFile(f, path)
}

// AddFlags registers -hints, -hint and -hintfile on fs; they fill s in
// command-line order.
func (s *HintSet) AddFlags(fs *flag.FlagSet) {
	fs.Func("hints", "hints as key=value,key=value (a piece without '=' continues the previous value); given to both implementations", func(v string) error {
		kvs, err := ParseHintList(v)
		for _, kv := range kvs {
			s.Set(kv[0], kv[1], "-hints")
		}
		return err
	})
	fs.Func("hint", "one hint as key=value (repeatable)", func(v string) error {
		k, val, err := ParseHintPair(v)
		if err == nil {
			s.Set(k, val, "-hint")
		}
		return err
	})
	fs.Func("hintfile", "file of hints in ROMIO's format: \"key value\" per line, # comments (repeatable)", func(path string) error {
		kvs, err := ReadHintFile(path)
		for _, kv := range kvs {
			s.Set(kv[0], kv[1], "-hintfile "+path)
		}
		return err
	})
}

// FormatHints prints hints as "k=v k=v" in key order.
func FormatHints(h map[string]string) string {
	keys := slices.Sorted(maps.Keys(h))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + h[k]
	}
	return strings.Join(parts, " ")
}
