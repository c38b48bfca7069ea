package coll

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeList feeds arbitrary lists, piece counts and byte totals
// (what another rank's header and message say: a tam local or global
// aggregator's, a segment member's) to DecodeList: it never panics or
// reads past the list, and what it accepts is count pieces inside
// [0, 2^63), sorted and disjoint when asked, that add up to the announced
// bytes and survive a round trip. Seeds: testdata/fuzz/FuzzDecodeList.
func FuzzDecodeList(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, count int, bytes int64, sorted bool) {
		out, err := DecodeList(b, count, bytes, sorted, nil)
		if err != nil {
			return
		}
		if len(out) != count {
			t.Fatalf("%d pieces, want %d", len(out), count)
		}
		var sum int64
		end := int64(math.MinInt64)
		for _, x := range out {
			if x.Off < 0 || x.N <= 0 || x.Off > math.MaxInt64-x.N || sorted && x.Off < end {
				t.Fatalf("pieces %+v", out)
			}
			end = x.End()
			sum += x.N
		}
		if sum != bytes {
			t.Fatalf("%d bytes listed, %d announced", sum, bytes)
		}
		// Varints have more than one encoding: the pieces, not the
		// bytes, survive a round trip.
		again, err := DecodeList(AppendRequests(nil, out), count, bytes, sorted, nil)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("round trip: %v -> %v, %v", out, again, err)
		}
	})
}

// Every malformed list is an error naming its problem: counts the bytes
// cannot hold (2^60 pieces, negative), pieces past 2^63 or before 0,
// empty pieces, sums past 2^63, bytes left over, unsorted pieces where
// order is required, and a total other than the announced one.
func TestDecodeListNamesProblems(t *testing.T) {
	one := []Extent{{Off: 0, N: 8}}
	for _, count := range []int{1 << 60, 1 << 62, -1, 2} {
		if _, err := DecodeList(AppendRequests(nil, one), count, 8, false, nil); err == nil || !strings.Contains(err.Error(), "pieces cannot be encoded in 2 bytes") {
			t.Errorf("count %d: %v", count, err)
		}
	}
	for _, tc := range []struct {
		l      []Extent
		extra  int
		bytes  int64
		sorted bool
		want   string
	}{
		{[]Extent{{Off: 0, N: 8}}, 3, 8, true, "3 bytes after 1 pieces"},
		{[]Extent{{Off: math.MaxInt64 - 4, N: 8}}, 0, 8, false, "8 bytes at offset 0+9223372036854775803 lie outside [0, 2^63)"},
		{[]Extent{{Off: -8, N: 8}, {Off: 0, N: 8}}, 0, 16, true, "8 bytes at offset 0-8 lie outside [0, 2^63)"},
		{[]Extent{{Off: 0, N: 8}, {Off: 8, N: 0}}, 0, 8, false, "bad piece (8, 0)"},
		{[]Extent{{Off: 0, N: math.MaxInt64}, {Off: 0, N: 2}}, 0, math.MinInt64 + 1, false, "more than 2^63"},
		{[]Extent{{Off: 16, N: 8}, {Off: 0, N: 8}}, 0, 16, true, "unsorted piece list"},
		{[]Extent{{Off: 0, N: 8}}, 0, 9, true, "9 bytes announced but 8 listed"},
	} {
		b := append(AppendRequests(nil, tc.l), make([]byte, tc.extra)...)
		if _, err := DecodeList(b, len(tc.l), tc.bytes, tc.sorted, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
	// Unsorted and overlapping pieces are fine where order is not required.
	l := []Extent{{Off: 16, N: 8}, {Off: 0, N: 20}}
	got, err := DecodeList(AppendRequests(nil, l), 2, 28, false, nil)
	if err != nil || len(got) != 2 || got[0] != l[0] || got[1] != l[1] {
		t.Errorf("unsorted list without order: %v, %v", got, err)
	}
}
