package tam

import (
	"math"
	"strings"
	"testing"

	"github.com/collio/collio/internal/coll"
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
			if x.Off < 0 || x.N <= 0 || x.Off > math.MaxInt64-x.N {
				t.Fatalf("piece %+v", x)
			}
			sum += x.N
		}
		if sum != bytes {
			t.Fatalf("%d bytes listed, %d announced", sum, bytes)
		}
		if string(coll.AppendRequests(nil, out)) != string(b) {
			t.Fatal("pieces do not re-encode to the list")
		}
	})
}

// A count of 2^60 pieces or a negative count is an error, not a read past
// the list; so are a piece past 2^63, an empty piece and pieces whose sum
// passes 2^63.
func TestDecodeListHugeCount(t *testing.T) {
	b := coll.AppendRequests(nil, []coll.Extent{{Off: 0, N: 8}})
	for _, count := range []int{1 << 60, 1 << 62, -1, 2} {
		if _, err := decodeList(b, count, 8, nil); err == nil || !strings.Contains(err.Error(), "pieces cannot be encoded in 2 bytes") {
			t.Errorf("count %d: %v", count, err)
		}
	}
	b = coll.AppendRequest(nil, new(int64), math.MaxInt64-4, 8)
	if _, err := decodeList(b, 1, 8, nil); err == nil || !strings.Contains(err.Error(), "outside [0, 2^63)") {
		t.Errorf("piece past 2^63: %v", err)
	}
	b = coll.AppendRequests(nil, []coll.Extent{{Off: 0, N: 8}, {Off: 8, N: 0}})
	if _, err := decodeList(b, 2, 8, nil); err == nil || !strings.Contains(err.Error(), "bad piece (8, 0)") {
		t.Errorf("empty piece: %v", err)
	}
	b = coll.AppendRequests(nil, []coll.Extent{{Off: 0, N: math.MaxInt64}, {Off: 0, N: 2}})
	if _, err := decodeList(b, 2, math.MinInt64+1, nil); err == nil || !strings.Contains(err.Error(), "more than 2^63") {
		t.Errorf("sum past 2^63: %v", err)
	}
	b = coll.AppendRequests(nil, []coll.Extent{{Off: 0, N: 8}})
	if _, err := decodeList(b, 1, 9, nil); err == nil || !strings.Contains(err.Error(), "9 bytes announced but 8 listed") {
		t.Errorf("wrong total: %v", err)
	}
}
