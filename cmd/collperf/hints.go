package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// hintSet collects the hints of the -hints, -hint and -hintfile flags in
// command-line order: a key given again replaces the earlier value, so later
// sources win.
type hintSet struct {
	vals   map[string]string
	source map[string]string // where each value came from, for messages
}

func newHintSet() *hintSet {
	return &hintSet{vals: map[string]string{}, source: map[string]string{}}
}

func (s *hintSet) set(k, v, src string) {
	s.vals[k] = v
	s.source[k] = src
}

// checkHint rejects keys and values that no MPI_Info can hold or that are
// surely typing mistakes (spaces inside a key, an empty value).
func checkHint(k, v string) error {
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

// parseHintPair parses one -hint argument, key=value (the value may itself
// contain '=' and ',').
func parseHintPair(kv string) (string, string, error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return "", "", fmt.Errorf("%q is not key=value", kv)
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if err := checkHint(k, v); err != nil {
		return "", "", fmt.Errorf("%q: %w", kv, err)
	}
	return k, v, nil
}

// parseHintList parses a -hints argument, key=value,key=value. A piece
// without '=' continues the previous value, so list-valued hints can be
// written inline: cb_config_list=n1:1,n2:1,cb_nodes=2 gives cb_config_list
// "n1:1,n2:1" and cb_nodes "2".
func parseHintList(list string) ([][2]string, error) {
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
		k, v, err := parseHintPair(piece)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", list, err)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// parseHintFile parses a hint file in ROMIO's ROMIO_HINTS format: one
// "key value" pair per line, separated by blanks; blank lines and comments
// (from a '#' at the start of a line or after a blank to the end of the
// line) are ignored. Errors name the line.
func parseHintFile(r io.Reader, name string) ([][2]string, error) {
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
		if err := checkHint(f[0], f[1]); err != nil {
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

func readHintFile(path string) ([][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseHintFile(f, path)
}
