package coll

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

func encodeRequestList(list []Extent) []byte {
	var b []byte
	var end int64
	for _, x := range list {
		b = binary.AppendVarint(b, x.Off-end)
		b = binary.AppendUvarint(b, uint64(x.N))
		end = x.Off + x.N
	}
	return b
}

// FuzzDecodeRequests feeds arbitrary request lists and piece counts (what
// another rank sends in the request exchange) to DecodeRequests: it never
// panics or allocates for a count the bytes cannot hold, and what it
// accepts is n pieces inside [0, 2^63) that survive a round trip. Seeds:
// testdata/fuzz/FuzzDecodeRequests.
func FuzzDecodeRequests(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		list, err := DecodeRequests(b, n, nil)
		if err != nil {
			if cap(list) > len(b) {
				t.Fatalf("%d pieces claimed: capacity %d allocated for %d bytes", n, cap(list), len(b))
			}
			return
		}
		if len(list) != n {
			t.Fatalf("%d pieces, want %d", len(list), n)
		}
		for _, x := range list {
			if x.Off < 0 || x.N < 0 || x.Off > math.MaxInt64-x.N {
				t.Fatalf("piece %+v", x)
			}
		}
		again, err := DecodeRequests(encodeRequestList(list), n, nil)
		if err != nil || !slices.Equal(again, list) {
			t.Fatalf("round trip: %v -> %v, %v", list, again, err)
		}
	})
}

// A count of 2^60 pieces, or a negative one, is refused before anything
// is allocated, and so is a piece outside [0, 2^63).
func TestDecodeRequestsHugeCount(t *testing.T) {
	b := encodeRequestList([]Extent{{0, 8}, {16, 8}})
	for _, n := range []int{1 << 60, math.MaxInt, -1, 3} {
		allocs := testing.AllocsPerRun(1, func() { _, _ = DecodeRequests(b, n, nil) })
		_, err := DecodeRequests(b, n, nil)
		if err == nil || !strings.Contains(err.Error(), "pieces cannot be encoded in 4 bytes") || (allocs > 4 && !raceEnabled) {
			t.Errorf("n=%d: %v (%v allocations)", n, err, allocs)
		}
	}
	for _, bad := range []struct {
		b []byte
		n int
	}{
		{encodeRequestList([]Extent{{math.MaxInt64 - 4, 8}}), 1},              // end past 2^63
		{encodeRequestList([]Extent{{8, 8}, {-4, 1}}), 2},                     // negative offset
		{binary.AppendUvarint(binary.AppendVarint(nil, math.MaxInt64), 1), 1}, // end past 2^63
	} {
		if _, err := DecodeRequests(bad.b, bad.n, nil); err == nil || !strings.Contains(err.Error(), "outside [0, 2^63)") {
			t.Errorf("%x: %v", bad.b, err)
		}
	}
}
