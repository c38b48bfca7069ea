package twophase

import (
	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

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

// Job is everything a collective call needs on one rank.
type Job struct {
	Comm comm.Comm
	// File is the open file; it may be nil on ranks that are not
	// aggregators (romio_no_indep_rw).
	File        driver.File
	Aggregators []int   // ranks, in file-domain order
	Ranges      []Range // every rank's access range, indexed by rank
	Access      Access
	BufSize     int64 // cb_buffer_size: bytes per aggregator per round
	MinDomain   int64 // romio_min_fdomain_size
	Stripe      int64 // striping_unit: align domain boundaries to it
	// StripeCount > 0 (with Stripe) selects stripe-cyclic domains, as
	// ROMIO's Lustre driver: see engine.plan. CoRatio is
	// romio_lustre_co_ratio (aggregators per storage target).
	StripeCount int
	CoRatio     int
	// AffinityBlock > 0 (and at most BufSize, with two or more
	// aggregators and no StripeCount) selects affinity domains of blocks
	// of this size (affinity.go; AffinityBlockSize gives the usual one).
	AffinityBlock int64
	// TotalBytes is the sum of every rank's Access.Size (known from the
	// call's entry Allgather); affinity domains need it.
	TotalBytes int64
	// NodeOf, when set, is the node of every rank: affinity domains then
	// give the blocks of a rank that does not aggregate to an aggregator
	// on its node.
	NodeOf []int
	// Own, when set, is every rank's OwnBlocks report at grid OwnGrid
	// (from the call's entry record): if the blocks tile the span, each
	// rank touching its own, and every rank with data aggregates, the
	// call runs without a plan or an exchange (own.go). It needs affinity
	// domains to be allowed, as AffinityBlock does, but not their size.
	OwnGrid int64
	Own     []OwnBlocks
	RMW     bool // read-modify-write windows with holes (else write each run)
	Atomic  bool // lock each window; overlapping writes resolve by rank order
	// Overlap runs each round's file I/O in a goroutine, behind the next
	// round's exchange (two buffers on aggregators instead of one).
	Overlap bool
	// Buffers, when set, keeps exchange buffers between calls.
	Buffers *Buffers
	Stats   *metrics.Call
}

func (j *Job) memContiguous() bool {
	t := j.Access.MemType
	return t == nil || t.IsContiguous() && t.LB() == 0
}

func (j *Job) fileStream() *layout.Stream {
	return layout.NewViewStream(j.Access.Filetype, j.Access.Disp)
}

func (j *Job) memStream() *layout.Stream {
	a := j.Access
	if j.memContiguous() {
		return layout.NewStream(layout.Bytes(a.Size), 0, 1)
	}
	return layout.NewStream(a.MemType, 0, a.Count)
}

// piece is a run contiguous in memory (offset into Buf) and in the file.
type piece struct{ mem, file, n int64 }

// slicer finds this rank's pieces inside file windows.
type slicer struct {
	j      *Job
	fs, ms *layout.Stream
}

func newSlicer(j *Job) *slicer {
	return &slicer{j: j, fs: j.fileStream(), ms: j.memStream()}
}

// in appends to buf this rank's pieces whose file bytes lie in the
// sorted, disjoint ranges ws, in file order, and returns them with the
// data range [lo, hi) they lie in (positions relative to the start of the
// access) and their bytes n: n < hi-lo when other data of the rank falls
// between the ranges.
func (s *slicer) in(ws []Range, buf []piece) (_ []piece, lo, hi, n int64, err error) {
	first := true
	for _, w := range ws {
		var l, h int64
		if buf, l, h, err = s.inRange(w, buf); err != nil || h <= l {
			continue
		}
		if first {
			lo, first = l, false
		}
		hi, n = h, n+h-l
	}
	return buf, lo, hi, n, err
}

// clip turns a data position of the view into one relative to the
// access, cut to the access.
func (s *slicer) clip(d int64) int64 {
	a := s.j.Access
	return min(max(d, a.DataStart), a.DataStart+a.Size) - a.DataStart
}

// inRange is in for one range.
func (s *slicer) inRange(w Range, buf []piece) (_ []piece, lo, hi int64, err error) {
	a := s.j.Access
	if w.Empty() || a.Size == 0 {
		return buf, 0, 0, nil
	}
	if lo, err = s.fs.DataBefore(w.Start); err != nil {
		return buf, 0, 0, err
	}
	if hi, err = s.fs.DataBefore(w.End); err != nil {
		return buf, 0, 0, err
	}
	lo, hi = s.clip(lo), s.clip(hi)
	if hi <= lo {
		return buf, 0, 0, nil
	}
	if err = s.fs.SeekData(a.DataStart + lo); err != nil {
		return buf, 0, 0, err
	}
	if err = s.ms.SeekData(lo); err != nil {
		return buf, 0, 0, err
	}
	err = layout.Zip(s.ms, s.fs, hi-lo, func(m, f, n int64) error {
		buf = append(buf, piece{mem: m, file: f, n: n})
		return nil
	})
	return buf, lo, hi, err
}

// blockBytes sets keys[i] to OwnerKey(this rank's bytes in block i of
// span, rank), for the blocks that meet the rank's own access range. It
// walks the rank's pieces while they are fewer than the blocks (large
// runs: a few steps per run), else asks the view for the data before each
// block boundary (tiny pieces: O(log) per block).
func (s *slicer) blockBytes(span Range, block int64, keys []int64, rank int) error {
	a := s.j.Access
	own := s.j.Ranges[rank]
	own = Range{max(own.Start, span.Start), min(own.End, span.End)}
	if own.Empty() || a.Size == 0 {
		return nil
	}
	first := int(own.Start/block - span.Start/block)
	last := int((own.End-1)/block - span.Start/block)
	if done, err := s.blockBytesByPieces(own, span, block, keys, pieceBudget(last-first+1)); err != nil || done {
		if err == nil {
			for i := first; i <= last; i++ {
				keys[i] = OwnerKey(keys[i], rank)
			}
		}
		return err
	}
	clear(keys[first : last+1])
	d, err := s.fs.DataBefore(BlockRange(span, block, first).Start)
	if err != nil {
		return err
	}
	prev := s.clip(d)
	for i := first; i <= last; i++ {
		if d, err = s.fs.DataBefore(BlockRange(span, block, i).End); err != nil {
			return err
		}
		cur := s.clip(d)
		keys[i] = OwnerKey(cur-prev, rank)
		prev = cur
	}
	return nil
}

// pieceBudget is how many pieces blockBytes walks before it counts by
// block boundaries instead. A variable for tests.
var pieceBudget = func(blocks int) int { return blocks }

// blockBytesByPieces adds the rank's bytes per block into keys by walking
// its pieces, and gives up (false) after budget pieces or at a piece
// outside own (the rank's access range).
func (s *slicer) blockBytesByPieces(own, span Range, block int64, bytes []int64, budget int) (bool, error) {
	a := s.j.Access
	if err := s.fs.SeekData(a.DataStart); err != nil {
		return false, err
	}
	base := span.Start / block
	for left, pieces := a.Size, 0; left > 0; pieces++ {
		off, n, ok := s.fs.Next(left)
		if !ok || pieces == budget || off < own.Start || off+n > own.End {
			return false, nil // the other way is exact in every case
		}
		left -= n
		for end := off + n; off < end; {
			b := off / block
			next := min(end, (b+1)*block)
			bytes[b-base] += next - off
			off = next
		}
	}
	return true, nil
}
