package segment

import (
	"math"
	"strings"
	"testing"

	"github.com/collio/collio/internal/coll"
)

// FuzzDecodeList feeds arbitrary member piece lists, piece counts and
// byte totals (what a group member sends its leader) to decodeList: it
// never panics, and what it accepts is count sorted, disjoint pieces
// inside [0, 2^63) that add up to the announced bytes and re-encode to
// the list. Seeds: testdata/fuzz/FuzzDecodeList.
func FuzzDecodeList(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, count int, bytes int64) {
		l, err := decodeList(b, count, bytes)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "segment: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(l) != count {
			t.Fatalf("%d pieces, want %d", len(l), count)
		}
		var sum int64
		end := int64(math.MinInt64)
		for _, p := range l {
			if p.N <= 0 || p.Off < 0 || p.Off < end || p.Off > math.MaxInt64-p.N {
				t.Fatalf("pieces %+v", l)
			}
			end = p.End()
			sum += p.N
		}
		if sum != bytes {
			t.Fatalf("%d bytes listed, %d announced", sum, bytes)
		}
		if string(coll.AppendRequests(nil, l)) != string(b) {
			t.Fatal("pieces do not re-encode to the list")
		}
	})
}

func TestDecodeListNamesProblems(t *testing.T) {
	for _, tc := range []struct {
		l     []coll.Extent
		extra int
		bytes int64
		want  string
	}{
		{[]coll.Extent{{Off: 0, N: 8}}, 3, 8, "3 bytes after 1 pieces"},
		{[]coll.Extent{{Off: math.MaxInt64 - 4, N: 8}}, 0, 8, "8 bytes at offset 0+9223372036854775803 lie outside [0, 2^63)"},
		{[]coll.Extent{{Off: -8, N: 8}, {Off: 0, N: 8}}, 0, 16, "8 bytes at offset 0-8 lie outside [0, 2^63)"},
		{[]coll.Extent{{Off: 0, N: 8}, {Off: 8, N: 0}}, 0, 8, "bad piece (8, 0)"},
		{[]coll.Extent{{Off: 16, N: 8}, {Off: 0, N: 8}}, 0, 16, "unsorted piece list"},
		{[]coll.Extent{{Off: 0, N: 8}}, 0, 9, "announced 9 bytes but listed 8"},
	} {
		b := append(coll.AppendRequests(nil, tc.l), make([]byte, tc.extra)...)
		if _, err := decodeList(b, len(tc.l), tc.bytes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
}
