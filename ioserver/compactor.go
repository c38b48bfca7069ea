// Package ioserver runs dedicated I/O server ranks: compute ranks hand the
// data of their writes to a few server ranks and go on computing while the
// servers write it in the background. Senders wait for credit (a server
// announces how many bytes it can take), so server memory stays bounded and
// nothing is dropped. Each server keeps its queued writes in a Compactor,
// which merges adjacent and overlapping requests, lets newer bytes replace
// queued older ones (write morphing) and serves reads from the queue (write
// stealing).
package ioserver

import (
	"slices"
	"sort"
)

// Run is a contiguous range of queued bytes.
type Run struct {
	Off  int64
	Data []byte
}

// End is the offset just past the run.
func (r Run) End() int64 { return r.Off + int64(len(r.Data)) }

// Stats counts what a Compactor saved.
type Stats struct {
	Requests int64 // writes queued
	Merged   int64 // writes that joined an adjacent or overlapping queued run
	Morphed  int64 // queued bytes replaced by newer writes before reaching the file
	Stolen   int64 // reads served fully or partly from the queue
	StoleB   int64 // bytes of those reads served from the queue
}

// Add adds t to s.
func (s *Stats) Add(t Stats) {
	s.Requests += t.Requests
	s.Merged += t.Merged
	s.Morphed += t.Morphed
	s.Stolen += t.Stolen
	s.StoleB += t.StoleB
}

// Compactor is the queue of writes of one file not yet written: runs in
// offset order, none overlapping or touching another. It is a plain data
// structure, not safe for concurrent use, and does no I/O.
type Compactor struct {
	runs  []Run
	bytes int64
	stats Stats
}

// Bytes is the number of bytes queued.
func (c *Compactor) Bytes() int64 { return c.bytes }

// Len is the number of runs queued.
func (c *Compactor) Len() int { return len(c.runs) }

// Stats returns the counts so far.
func (c *Compactor) Stats() Stats { return c.stats }

// Runs returns the queued runs in offset order (shared, not copied).
func (c *Compactor) Runs() []Run { return c.runs }

// Add queues a write of data at off, newer than everything queued: where
// it overlaps queued bytes, those are replaced (morphed); runs it overlaps
// or touches become one run. data is copied.
func (c *Compactor) Add(off int64, data []byte) {
	if len(data) == 0 {
		return
	}
	c.stats.Requests++
	end := off + int64(len(data))
	// Runs [lo, hi) overlap or touch [off, end).
	lo := sort.Search(len(c.runs), func(i int) bool { return c.runs[i].End() >= off })
	hi := lo
	for hi < len(c.runs) && c.runs[hi].Off <= end {
		hi++
	}
	if lo == hi {
		c.runs = slices.Insert(c.runs, lo, Run{Off: off, Data: slices.Clone(data)})
		c.bytes += int64(len(data))
		return
	}
	c.stats.Merged++
	start, stop := min(off, c.runs[lo].Off), max(end, c.runs[hi-1].End())
	var buf []byte
	// Grow the first run in place when it already starts the merged range
	// and has room: sequential appends then cost no copy of what is queued.
	if first := c.runs[lo]; first.Off == start && int64(cap(first.Data)) >= stop-start {
		buf = first.Data[:stop-start]
	} else {
		buf = make([]byte, stop-start, growCap(stop-start))
		copy(buf[c.runs[lo].Off-start:], c.runs[lo].Data)
	}
	old := int64(0)
	for i := lo; i < hi; i++ {
		r := c.runs[i]
		old += int64(len(r.Data))
		if i > lo {
			copy(buf[r.Off-start:], r.Data)
		}
		c.stats.Morphed += overlap(r.Off, r.End(), off, end)
	}
	copy(buf[off-start:], data)
	c.runs[lo] = Run{Off: start, Data: buf}
	c.runs = slices.Delete(c.runs, lo+1, hi)
	c.bytes += (stop - start) - old
}

// growCap leaves room for a run to grow by appends without a copy each time.
func growCap(n int64) int64 { return n + n/4 }

func overlap(a0, a1, b0, b1 int64) int64 {
	lo, hi := max(a0, b0), min(a1, b1)
	if hi <= lo {
		return 0
	}
	return hi - lo
}

// Steal copies the queued bytes of [off, off+len(p)) into p and returns
// the ranges of p (as file offsets) that the queue does not hold, which
// must come from the file. A read served at least partly from the queue
// is counted as stolen.
func (c *Compactor) Steal(off int64, p []byte) (gaps []Range) {
	end := off + int64(len(p))
	pos := off
	got := int64(0)
	i := sort.Search(len(c.runs), func(i int) bool { return c.runs[i].End() > off })
	for ; i < len(c.runs) && c.runs[i].Off < end; i++ {
		r := c.runs[i]
		if r.Off > pos {
			gaps = append(gaps, Range{pos, r.Off})
		}
		s, e := max(r.Off, off), min(r.End(), end)
		copy(p[s-off:e-off], r.Data[s-r.Off:e-r.Off])
		got += e - s
		pos = e
	}
	if pos < end {
		gaps = append(gaps, Range{pos, end})
	}
	if got > 0 {
		c.stats.Stolen++
		c.stats.StoleB += got
	}
	return gaps
}

// Covered returns the end of the last queued byte in [off, end), or off if
// none: how far a read there may see data the file does not have yet.
func (c *Compactor) Covered(off, end int64) int64 {
	i := sort.Search(len(c.runs), func(i int) bool { return c.runs[i].Off >= end })
	if i == 0 || c.runs[i-1].End() <= off {
		return off
	}
	return min(c.runs[i-1].End(), end)
}

// End is the end of the last queued byte (0 when empty).
func (c *Compactor) End() int64 {
	if len(c.runs) == 0 {
		return 0
	}
	return c.runs[len(c.runs)-1].End()
}

// Take removes and returns every queued run, in offset order.
func (c *Compactor) Take() []Run {
	r := c.runs
	c.runs, c.bytes = nil, 0
	return r
}

// Range is a half-open byte range [Start, End).
type Range struct{ Start, End int64 }
