package coll

import "slices"

// Extent is a file range [Off, Off+N).
type Extent struct{ Off, N int64 }

// End is the first byte after the extent.
func (x Extent) End() int64 { return x.Off + x.N }

// Entry is one piece of a merged list: its file range, the source it came
// from and where its bytes sit in that source's data (see Merger.Reset).
type Entry struct {
	Off, N int64
	Src    int
	At     int64
}

// Merger k-way merges sources' extent lists, each sorted by offset, into
// file order, ties broken by source: O(n log k) for n pieces from k
// sources. The heap holds each source's next offset itself, so a
// comparison costs no call and no indirection (E3SM's flushes merge 10^5
// to 10^6 pieces per aggregator). Pieces may be taken whole (All) or in
// parts (Take), which segmentation needs to cut pieces at cycle edges.
// The zero value is ready for Reset; a Merger reuses its heap across
// Resets.
type Merger struct {
	lists [][]Extent
	h     []cursor
}

// cursor is one source's place in the merge: the offset of its next
// unconsumed byte (the key), the source, the index of the piece holding
// that byte and the byte's data position.
type cursor struct {
	off  int64
	src  int
	next int
	at   int64
}

// Reset starts a merge of lists. A source's data positions start at
// starts[s] (0 for every source when starts is nil) and advance by each
// of its pieces' lengths, in list order.
func (m *Merger) Reset(lists [][]Extent, starts []int64) {
	m.lists = lists
	m.h = m.h[:0]
	for s, l := range lists {
		if len(l) == 0 {
			continue
		}
		c := cursor{off: l[0].Off, src: s}
		if starts != nil {
			c.at = starts[s]
		}
		m.h = append(m.h, c)
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

// Len is the number of sources with pieces left.
func (m *Merger) Len() int { return len(m.h) }

// Peek returns the file offset of the next byte in merged order.
func (m *Merger) Peek() (int64, bool) {
	if len(m.h) == 0 {
		return 0, false
	}
	return m.h[0].off, true
}

// Take consumes at most limit (> 0) bytes of the current piece of the
// source first in merged order: the entry it took and the index of the
// piece in its source's list. The Merger must not be empty.
func (m *Merger) Take(limit int64) (e Entry, idx int) {
	c := &m.h[0]
	list := m.lists[c.src]
	idx = c.next
	end := list[idx].End()
	e = Entry{Off: c.off, N: min(end-c.off, limit), Src: c.src, At: c.at}
	c.off += e.N
	c.at += e.N
	if c.off == end {
		c.next++
		if c.next == len(list) {
			m.h[0] = m.h[len(m.h)-1]
			m.h = m.h[:len(m.h)-1]
		} else {
			c.off = list[c.next].Off
		}
	}
	m.down(0)
	return e, idx
}

// All appends every remaining piece, whole, to out in merged order.
func (m *Merger) All(out []Entry) []Entry {
	h, lists := m.h, m.lists
	// Sized once: growing by appends would copy and first-touch about
	// twice the memory, which on a large call costs more than the merge.
	left := 0
	for _, c := range h {
		left += len(lists[c.src]) - c.next
	}
	out = slices.Grow(out, left)
	for len(h) > 0 {
		c := &h[0]
		list := lists[c.src]
		n := list[c.next].End() - c.off // all of it unless Take cut it
		out = append(out, Entry{Off: c.off, N: n, Src: c.src, At: c.at})
		c.at += n
		c.next++
		if c.next == len(list) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		} else {
			c.off = list[c.next].Off
		}
		down(h, 0)
	}
	m.h = h
	return out
}

// Merge appends the pieces of lists to out in merged order; starts is as
// for Reset.
func Merge(lists [][]Extent, starts []int64, out []Entry) []Entry {
	var m Merger
	m.Reset(lists, starts)
	return m.All(out)
}

func (m *Merger) down(i int) { down(m.h, i) }

func less(h []cursor, i, j int) bool {
	return h[i].off < h[j].off || h[i].off == h[j].off && h[i].src < h[j].src
}

// down restores the min-heap order of h by (offset, source) below i.
func down(h []cursor, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && less(h, r, l) {
			c = r
		}
		if !less(h, c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// End is the first byte after the entry's range.
func (e Entry) End() int64 { return e.Off + e.N }

// CopyPiece: an aggregator copies pieces that average less than this many
// bytes through one buffer rather than handing the kernel an iovec each
// (E3SM's flushes average 16 bytes a piece; FUSE file systems take such
// vectors apart again).
const CopyPiece = 1024

// CopyPieces reports whether sorted's pieces average under CopyPiece bytes
// (and there are enough of them for it to matter).
func CopyPieces(sorted []Entry) bool {
	if len(sorted) < 16 {
		return false
	}
	var total int64
	for _, x := range sorted {
		total += x.N
	}
	return total < CopyPiece*int64(len(sorted))
}
