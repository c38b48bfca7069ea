package tam

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/collio/collio/internal/coll"
)

// stretch is a maximal run of merged entries [first, end) whose file
// ranges touch or overlap, so together they cover [off, off+n) without a
// gap: what a local aggregator coalesces into one extent.
type stretch struct {
	off, n     int64
	first, end int
	overlap    bool // some of its entries share bytes
}

// findRuns splits a merged (sorted) list into runs, appending to out.
func findRuns(merged []coll.Entry, out []stretch) []stretch {
	// Counted first, so that out grows once and no larger than it needs.
	n, end := 0, int64(math.MinInt64)
	for _, e := range merged {
		if e.Off > end {
			n++
		}
		end = max(end, e.End())
	}
	out = slices.Grow(out, n)
	for k, e := range merged {
		if len(out) > 0 {
			last := &out[len(out)-1]
			if end := last.off + last.n; e.Off <= end {
				if e.Off < end {
					last.overlap = true
				}
				last.n = max(end, e.End()) - last.off
				last.end = k + 1
				continue
			}
		}
		out = append(out, stretch{off: e.Off, n: e.N, first: k, end: k + 1})
	}
	return out
}

// coalesce appends to dst, run after run, the bytes the merged entries
// carry (data[src] is source src's packed data): entries of a run without
// overlaps one after another in file order; a run with overlaps laid down
// source by source in source order, so where pieces overlap the later
// source (the higher rank) wins.
func coalesce(merged []coll.Entry, runs []stretch, data [][]byte, dst []byte) []byte {
	var order []coll.Entry
	for _, rn := range runs {
		es := merged[rn.first:rn.end]
		if !rn.overlap {
			for _, e := range es {
				dst = append(dst, data[e.Src][e.At:e.At+e.N]...)
			}
			continue
		}
		base := len(dst)
		dst = slices.Grow(dst, int(rn.n))[:base+int(rn.n)]
		order = append(order[:0], es...)
		slices.SortStableFunc(order, func(a, b coll.Entry) int { return a.Src - b.Src })
		for _, e := range order {
			copy(dst[base+int(e.Off-rn.off):], data[e.Src][e.At:e.At+e.N])
		}
	}
	return dst
}

// Wire formats: (offset, length) lists are coll's compact request
// lists; every list is announced by a counts record of countsWidth bytes:
// pieces, data bytes and the bytes of the encoded list, little-endian.
const countsWidth = 24

func putCounts(b []byte, pieces, bytes, list int64) {
	binary.LittleEndian.PutUint64(b, uint64(pieces))
	binary.LittleEndian.PutUint64(b[8:], uint64(bytes))
	binary.LittleEndian.PutUint64(b[16:], uint64(list))
}

func getCounts(b []byte) (pieces, bytes, list int64) {
	return int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:])),
		int64(binary.LittleEndian.Uint64(b[16:]))
}

// decodeList parses an encoded list of count pieces from b into out,
// checking that every piece holds bytes and that they add up to bytes.
func decodeList(b []byte, count int, bytes int64, out []coll.Extent) ([]coll.Extent, error) {
	out, err := coll.DecodeList(b, count, bytes, false, out)
	if err != nil {
		return out, fmt.Errorf("tam: %w", err)
	}
	return out, nil
}
