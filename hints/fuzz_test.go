package hints

import (
	"bytes"
	"errors"
	"testing"

	"github.com/collio/collio/internal/ioerr"
)

// FuzzResolve feeds arbitrary hints files and user hints through Resolve,
// strict and lenient: it must never panic, strict failures must be
// ErrBadHint, lenient mode must never fail, and every effective value must
// be valid and stable when passed back in.
func FuzzResolve(f *testing.F) {
	f.Add("cb_buffer_size 16m\n# c\n\nromio_cb_write enable\n", "cb_config_list", "a:1,*:*")
	f.Add("broken\n\tcb_nodes\t-3\r\n", "striping_unit", "9999999999g")
	f.Add("e10_cache_path /x y\nunknown\tv\n", " direct_read ", "TRUE")
	f.Add("\x00 \xff\n", "", "")
	f.Fuzz(func(t *testing.T, file, key, value string) {
		opts := Options{
			Getenv:   envWith("hints-file"),
			ReadFile: func(string) ([]byte, error) { return []byte(file), nil },
		}
		user := map[string]string{key: value}

		if _, err := Resolve(user, opts); err != nil && !errors.Is(err, ioerr.ErrBadHint) {
			t.Fatalf("strict error of the wrong class: %v", err)
		}

		opts.Lenient = true
		s, err := Resolve(user, opts)
		if err != nil {
			t.Fatalf("lenient Resolve failed: %v", err)
		}
		for k, v := range s.Map() {
			spec, ok := Lookup(k)
			if !ok || v == spec.Default {
				continue
			}
			if norm, err := Normalize(spec, v); err != nil || norm != v {
				t.Fatalf("effective %s=%q does not validate to itself: %q, %v", k, v, norm, err)
			}
		}
		again, err := Resolve(s.Map(), Options{Getenv: envWith("")})
		if err != nil {
			t.Fatalf("echoed hints rejected: %v", err)
		}
		for _, spec := range Table {
			if again.String(spec.Key) != s.String(spec.Key) {
				t.Fatalf("%s changed when echoed back: %q -> %q", spec.Key, s.String(spec.Key), again.String(spec.Key))
			}
		}
		var b bytes.Buffer
		s.Fprint(&b)
	})
}
