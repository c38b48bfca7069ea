package segment

import (
	"math"
	"strings"
	"testing"
)

// FuzzDecodeList feeds arbitrary member piece lists and byte totals (what
// a group member sends its leader) to decodeList: it never panics, and
// what it accepts is sorted, disjoint pieces inside [0, 2^63) that add up
// to the announced bytes and re-encode to the list. Seeds:
// testdata/fuzz/FuzzDecodeList.
func FuzzDecodeList(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, bytes int64) {
		l, err := decodeList(b, bytes)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "segment: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		var sum int64
		end := int64(math.MinInt64)
		for _, p := range l {
			if p.n <= 0 || p.off < 0 || p.off < end || p.off > math.MaxInt64-p.n {
				t.Fatalf("pieces %+v", l)
			}
			end = p.off + p.n
			sum += p.n
		}
		if sum != bytes {
			t.Fatalf("%d bytes listed, %d announced", sum, bytes)
		}
		if string(encodeList(l)) != string(b) {
			t.Fatal("pieces do not re-encode to the list")
		}
	})
}

func TestDecodeListNamesProblems(t *testing.T) {
	for _, tc := range []struct {
		l     []pc
		extra int
		bytes int64
		want  string
	}{
		{[]pc{{off: 0, n: 8}}, 3, 8, "piece list of 19 bytes, not a whole number of pieces"},
		{[]pc{{off: math.MaxInt64 - 4, n: 8}}, 0, 8, "bad piece (9223372036854775803, 8)"},
		{[]pc{{off: -8, n: 8}, {off: 0, n: 8}}, 0, 16, "bad piece (-8, 8)"},
		{[]pc{{off: 16, n: 8}, {off: 0, n: 8}}, 0, 16, "unsorted piece list"},
		{[]pc{{off: 0, n: 8}}, 0, 9, "announced 9 bytes but listed 8"},
	} {
		b := append(encodeList(tc.l), make([]byte, tc.extra)...)
		if _, err := decodeList(b, tc.bytes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
}
