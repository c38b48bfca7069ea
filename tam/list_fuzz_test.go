package tam

import (
	"math"
	"strings"
	"testing"
)

// FuzzDecodeList feeds arbitrary piece lists, counts and byte totals (what
// another rank's headers and payload say) to decodeList: it never panics
// or reads past the list, and what it accepts is count pieces inside
// [0, 2^63) that add up to the announced bytes. Seeds:
// testdata/fuzz/FuzzDecodeList.
func FuzzDecodeList(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, count int, bytes int64) {
		out, err := decodeList(b, count, bytes, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tam: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(out) != count {
			t.Fatalf("%d pieces, want %d", len(out), count)
		}
		var sum int64
		for _, x := range out {
			if x.off < 0 || x.n <= 0 || x.off > math.MaxInt64-x.n {
				t.Fatalf("piece %+v", x)
			}
			sum += x.n
		}
		if sum != bytes {
			t.Fatalf("%d bytes listed, %d announced", sum, bytes)
		}
		var again []byte
		for _, x := range out {
			again = appendList(again, x.off, x.n)
		}
		if string(again) != string(b[:16*count]) {
			t.Fatal("pieces do not re-encode to the list")
		}
	})
}

// A count of 2^60 pieces (whose 16*count wraps to 0) or a negative count
// is an error, not a read past the list.
func TestDecodeListHugeCount(t *testing.T) {
	b := appendList(nil, 0, 8)
	for _, count := range []int{1 << 60, 1 << 62, -1, 2} {
		if _, err := decodeList(b, count, 8, nil); err == nil || !strings.Contains(err.Error(), "pieces in 16 bytes") {
			t.Errorf("count %d: %v", count, err)
		}
	}
	b = appendList(appendList(nil, math.MaxInt64-4, 8), 0, 8)
	if _, err := decodeList(b, 2, 16, nil); err == nil || !strings.Contains(err.Error(), "bad piece") {
		t.Errorf("piece past 2^63: %v", err)
	}
	b = appendList(appendList(nil, 0, math.MaxInt64), 0, 2)
	if _, err := decodeList(b, 2, math.MinInt64+1, nil); err == nil || !strings.Contains(err.Error(), "more than 2^63") {
		t.Errorf("sum past 2^63: %v", err)
	}
}
