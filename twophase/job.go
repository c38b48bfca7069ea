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
	RMW         bool // read-modify-write windows with holes (else write each run)
	Atomic      bool // lock each window; overlapping writes resolve by rank order
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

// in appends to buf this rank's pieces whose file bytes lie in w, in file
// order, and returns them with the data range [lo, hi) they cover
// (positions relative to the start of the access).
func (s *slicer) in(w Range, buf []piece) (_ []piece, lo, hi int64, err error) {
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
	lo = min(max(lo, a.DataStart), a.DataStart+a.Size) - a.DataStart
	hi = min(max(hi, a.DataStart), a.DataStart+a.Size) - a.DataStart
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
