package tam

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// extent is a file range [off, off+n).
type extent struct{ off, n int64 }

// entry is one piece of a merged list: its file range, the source it came
// from (index in source order), its index in that source's list and the
// position of its bytes in the source's packed data.
type entry struct {
	off, n int64
	at     int64
	src    int32
	idx    int32
}

// mergeLists k-way merges the sources' lists, each sorted by offset, into
// one list sorted by offset, ties broken by source order, appending to
// out. A binary heap of source cursors makes it O(N log k) for N pieces
// from k sources (the paper's heap merge sort).
func mergeLists(lists [][]extent, out []entry) []entry {
	// The heap holds source indices; next[s] is s's next unmerged piece and
	// at[s] where its bytes start.
	h := make([]int32, 0, len(lists))
	next := make([]int, len(lists))
	at := make([]int64, len(lists))
	key := func(s int32) int64 { return lists[s][next[s]].off }
	less := func(a, b int32) bool {
		ka, kb := key(a), key(b)
		return ka < kb || ka == kb && a < b
	}
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(h[c+1], h[c]) {
				c++
			}
			if !less(h[c], h[i]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for s := range lists {
		if len(lists[s]) > 0 {
			h = append(h, int32(s))
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		s := h[0]
		x := lists[s][next[s]]
		out = append(out, entry{off: x.off, n: x.n, at: at[s], src: s, idx: int32(next[s])})
		at[s] += x.n
		next[s]++
		if next[s] == len(lists[s]) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return out
}

// stretch is a maximal run of merged entries [first, end) whose file
// ranges touch or overlap, so together they cover [off, off+n) without a
// gap: what a local aggregator coalesces into one extent.
type stretch struct {
	off, n     int64
	first, end int
	overlap    bool // some of its entries share bytes
}

// findRuns splits a merged (sorted) list into runs, appending to out.
func findRuns(merged []entry, out []stretch) []stretch {
	for k, e := range merged {
		if len(out) > 0 {
			last := &out[len(out)-1]
			if end := last.off + last.n; e.off <= end {
				if e.off < end {
					last.overlap = true
				}
				last.n = max(end, e.off+e.n) - last.off
				last.end = k + 1
				continue
			}
		}
		out = append(out, stretch{off: e.off, n: e.n, first: k, end: k + 1})
	}
	return out
}

// coalesce appends to dst, run after run, the bytes the merged entries
// carry (data[src] is source src's packed data): entries of a run without
// overlaps one after another in file order; a run with overlaps laid down
// source by source in source order, so where pieces overlap the later
// source (the higher rank) wins.
func coalesce(merged []entry, runs []stretch, data [][]byte, dst []byte) []byte {
	var order []entry
	for _, rn := range runs {
		es := merged[rn.first:rn.end]
		if !rn.overlap {
			for _, e := range es {
				dst = append(dst, data[e.src][e.at:e.at+e.n]...)
			}
			continue
		}
		base := len(dst)
		dst = slices.Grow(dst, int(rn.n))[:base+int(rn.n)]
		order = append(order[:0], es...)
		slices.SortStableFunc(order, func(a, b entry) int { return int(a.src - b.src) })
		for _, e := range order {
			copy(dst[base+int(e.off-rn.off):], data[e.src][e.at:e.at+e.n])
		}
	}
	return dst
}

// Wire formats: lists are (offset, length) pairs of little-endian uint64.

func appendList(b []byte, off, n int64) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	return binary.LittleEndian.AppendUint64(b, uint64(n))
}

// decodeList parses count pairs from b into out, checking that their
// lengths add up to bytes.
func decodeList(b []byte, count int, bytes int64, out []extent) ([]extent, error) {
	if count < 0 || count > len(b)/16 {
		return out, fmt.Errorf("tam: list of %d pieces in %d bytes", count, len(b))
	}
	var sum int64
	for k := 0; k < count; k++ {
		x := extent{int64(binary.LittleEndian.Uint64(b[16*k:])), int64(binary.LittleEndian.Uint64(b[16*k+8:]))}
		if x.n <= 0 || x.off < 0 || x.off > math.MaxInt64-x.n {
			return out, fmt.Errorf("tam: bad piece (%d, %d)", x.off, x.n)
		}
		if x.n > math.MaxInt64-sum {
			return out, fmt.Errorf("tam: pieces add up to more than 2^63 bytes")
		}
		sum += x.n
		out = append(out, x)
	}
	if sum != bytes {
		return out, fmt.Errorf("tam: %d bytes announced but %d listed", bytes, sum)
	}
	return out, nil
}

func putPair(b []byte, a, c int64) {
	binary.LittleEndian.PutUint64(b, uint64(a))
	binary.LittleEndian.PutUint64(b[8:], uint64(c))
}

func getPair(b []byte) (int64, int64) {
	return int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
}

// bufPool is one reusable buffer.
type bufPool struct{ b []byte }

// get returns n bytes with unspecified contents.
func (p *bufPool) get(n int64) []byte {
	if int64(cap(p.b)) < n {
		p.b = make([]byte, n)
	}
	return p.b[:n]
}
