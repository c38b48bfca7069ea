package coll

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

// Range is one rank's access: the file bytes [Start, End). Start >= End
// means the rank accesses nothing.
type Range struct{ Start, End int64 }

// Empty reports whether the range holds no bytes.
func (r Range) Empty() bool { return r.Start >= r.End }

// Len is the number of bytes in the range (0 if empty).
func (r Range) Len() int64 { return max(0, r.End-r.Start) }

// Span returns the smallest range covering every non-empty range, and
// false if all are empty.
func Span(ranges []Range) (Range, bool) {
	var s Range
	found := false
	for _, r := range ranges {
		if r.Empty() {
			continue
		}
		if !found {
			s, found = r, true
			continue
		}
		s.Start = min(s.Start, r.Start)
		s.End = max(s.End, r.End)
	}
	return s, found
}

// Interleaved reports whether some ranks' non-empty ranges overlap, which
// is when collective buffering can merge what ranks access. ROMIO takes
// the ranges in rank order, so disjoint ranges in another order (IOR's
// -C, a permuted decomposition) count as interleaved there and move every
// byte between ranks for nothing; here they do not.
func Interleaved(ranges []Range) bool {
	prevEnd, have := int64(0), false
	for _, r := range ranges {
		if r.Empty() {
			continue
		}
		if have && r.Start < prevEnd {
			return overlapOutOfOrder(ranges)
		}
		prevEnd, have = r.End, true
	}
	return false
}

// overlapOutOfOrder is Interleaved for ranges not in order of their
// starts: sorted, any range that starts before an earlier one ends.
func overlapOutOfOrder(ranges []Range) bool {
	sorted := make([]Range, 0, len(ranges))
	for _, r := range ranges {
		if !r.Empty() {
			sorted = append(sorted, r)
		}
	}
	slices.SortFunc(sorted, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	end := sorted[0].End
	for _, r := range sorted[1:] {
		if r.Start < end {
			return true
		}
		end = max(end, r.End)
	}
	return false
}

// Access is one rank's side of a collective call: the memory (Count
// instances of MemType from the start of Buf; a nil MemType means Count
// contiguous bytes) and the file side, the data bytes [DataStart,
// DataStart+Size) of the view's stream (Filetype tiled from Disp).
type Access struct {
	Buf       []byte
	MemType   *layout.Type
	Count     int64
	Disp      int64
	Filetype  *layout.Type
	DataStart int64
	Size      int64
}

// MemContiguous reports whether the memory side is Size contiguous bytes
// from Buf[0].
func (a Access) MemContiguous() bool {
	t := a.MemType
	return t == nil || t.IsContiguous() && t.LB() == 0
}

// FileStream walks the view's file bytes in data order.
func (a Access) FileStream() *layout.Stream { return layout.NewViewStream(a.Filetype, a.Disp) }

// MemStream walks the memory side in data order.
func (a Access) MemStream() *layout.Stream {
	if a.MemContiguous() {
		return layout.NewStream(layout.Bytes(a.Size), 0, 1)
	}
	return layout.NewStream(a.MemType, 0, a.Count)
}

// BytesBefore is how many bytes of the access lie before file offset end:
// what a read returns when the file ends there.
func (a Access) BytesBefore(end int64) (int64, error) {
	before, err := a.FileStream().DataBefore(end)
	if err != nil {
		return 0, err
	}
	return min(max(before-a.DataStart, 0), a.Size), nil
}

// OwnBlocks is one rank's report for two-phase's own-blocks check: the
// blocks of the grid its data touches and the sum of a hash over them.
// Count < 0: not counted.
type OwnBlocks struct {
	Count int64
	Hash  uint64
}

// Job is everything a collective call needs on one rank, whichever
// strategy runs it.
type Job struct {
	Comm comm.Comm
	// File is the open file; it may be nil on ranks that are not
	// aggregators (romio_no_indep_rw).
	File        driver.File
	Aggregators []int   // ranks, in file-domain order
	Ranges      []Range // every rank's access range, indexed by rank
	Access      Access
	BufSize     int64 // cb_buffer_size: bytes per aggregator per round
	// TotalBytes is the sum of every rank's Access.Size (known from the
	// call's entry Allgather).
	TotalBytes int64
	// Own, when set, is every rank's OwnBlocks report from the call's
	// entry record, made for a strategy that asks for them
	// (OwnBlocksReporter).
	Own    []OwnBlocks
	RMW    bool // read-modify-write windows with holes (else write each run)
	Atomic bool // lock each window; overlapping writes resolve by rank order
	// Overlap runs each round's file I/O in a goroutine, behind the next
	// round's exchange (two buffers on aggregators instead of one), in
	// calls of several rounds (OverlapsRounds).
	Overlap bool
	// WindowChunk is how much of a window an aggregator lays out in
	// memory at once (0: DefaultWindowChunk); tests use tiny ones.
	WindowChunk int64
	// Buffers, when set, keeps exchange buffers between calls.
	Buffers *Buffers
	Stats   *metrics.Call
	// Independent is the file object's own I/O of this rank's access; nil
	// where there is no file object (the strategies' own tests, the scale
	// model).
	Independent IndependentIO
	// EOF, when set on a read, lets a strategy leave the end of the file to
	// the caller (EndOfFile).
	EOF *EndOfFile
	// NoAffinityDomains has two-phase draw ROMIO's domains for a write
	// where its rule would draw affinity domains (not where the hint asks
	// for them): the measured choice times both.
	NoAffinityDomains bool
}

// OverlapsRounds reports whether a call of the given number of rounds
// runs its file I/O behind the next round's exchange: with Overlap, and
// only where there is a next round. In a call of one round, handing the
// I/O to another goroutine adds a wake-up and hides nothing.
func (j *Job) OverlapsRounds(rounds int) bool { return j.Overlap && rounds > 1 }

// Check validates what every rank must agree on for a job over n ranks;
// the same inputs give the same verdict everywhere, so no rank proceeds
// alone.
func (j *Job) Check(n int) error {
	if len(j.Ranges) != n {
		return fmt.Errorf("%d ranges for %d ranks", len(j.Ranges), n)
	}
	if err := CheckAggregators(n, j.Aggregators); err != nil {
		return err
	}
	return j.CheckBufSize()
}

// CheckBufSize checks that rounds can move data at all.
func (j *Job) CheckBufSize() error {
	if j.BufSize <= 0 {
		return fmt.Errorf("buffer size %d must be positive", j.BufSize)
	}
	return nil
}

// CheckAggregators validates an aggregator list for n ranks: between 1
// and n distinct ranks in [0, n).
func CheckAggregators(n int, aggs []int) error {
	if len(aggs) == 0 || len(aggs) > n {
		return fmt.Errorf("%d aggregators for %d ranks", len(aggs), n)
	}
	seen := make(map[int]bool, len(aggs))
	for _, a := range aggs {
		if a < 0 || a >= n || seen[a] {
			return fmt.Errorf("aggregator list %v has rank %d out of range or twice", aggs, a)
		}
		seen[a] = true
	}
	return nil
}

// DefaultWindowChunk: aggregators lay a window out in memory a megabyte
// at a time, through one buffer reused chunk after chunk, instead of one
// as large as the window. A call's first use of a buffer faults in every
// page of it (the kernel allocates and zeroes each), and E3SM's flushes
// each write a few windows of 8-16 MiB per aggregator.
const DefaultWindowChunk = 1 << 20

// Chunk is the bytes of a window j's aggregators lay out at once: the
// window chunk, or the stripe their domains are aligned to where larger.
func (j *Job) Chunk(stripe int64) int64 {
	c := j.WindowChunk
	if c <= 0 {
		c = DefaultWindowChunk
	}
	return max(c, stripe)
}

// ChunkEnd is where the chunk of a window range that starts at lo ends,
// the range ending at hi: chunk edges fall at multiples of chunk.
func ChunkEnd(lo, hi, chunk int64) int64 {
	return min((lo/chunk+1)*chunk, hi)
}
