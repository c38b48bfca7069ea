package tam

import (
	"github.com/collio/collio/layout"
	"github.com/collio/collio/twophase"
)

// piece is a run of this rank's access contiguous in memory (mem is an
// offset into Access.Buf) and in the file.
type piece struct{ mem, off, n int64 }

// slicer cuts this rank's access into pieces per file window, walking the
// file view and the memory type together.
type slicer struct {
	a      twophase.Access
	fs, ms *layout.Stream
	contig bool // memory is Size contiguous bytes from Buf[0]
}

func newSlicer(a twophase.Access) *slicer {
	s := &slicer{a: a, fs: layout.NewViewStream(a.Filetype, a.Disp)}
	t := a.MemType
	s.contig = t == nil || t.IsContiguous() && t.LB() == 0
	if s.contig {
		s.ms = layout.NewStream(layout.Bytes(a.Size), 0, 1)
	} else {
		s.ms = layout.NewStream(t, 0, a.Count)
	}
	return s
}

// cut appends to buf the pieces whose file bytes lie in w, in file order,
// and returns them with the data positions [lo, hi) they cover (relative to
// the start of the access).
func (s *slicer) cut(w twophase.Range, buf []piece) (_ []piece, lo, hi int64, err error) {
	a := s.a
	if w.Empty() || a.Size == 0 {
		return buf, 0, 0, nil
	}
	clip := func(p int64) int64 { return min(max(p, a.DataStart), a.DataStart+a.Size) - a.DataStart }
	if lo, err = s.fs.DataBefore(w.Start); err != nil {
		return buf, 0, 0, err
	}
	if hi, err = s.fs.DataBefore(w.End); err != nil {
		return buf, 0, 0, err
	}
	lo, hi = clip(lo), clip(hi)
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
		buf = append(buf, piece{mem: m, off: f, n: n})
		return nil
	})
	return buf, lo, hi, err
}
