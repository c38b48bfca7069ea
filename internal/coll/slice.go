package coll

import (
	"slices"

	"github.com/collio/collio/layout"
)

// Piece is a run of this rank's access contiguous in memory (Mem is an
// offset into Access.Buf) and in the file.
type Piece struct{ Mem, Off, N int64 }

// Slicer cuts this rank's access into pieces per file window, walking the
// file view and the memory layout together.
type Slicer struct {
	a      Access
	fs, ms *layout.Stream
}

// NewSlicer returns a slicer over a.
func NewSlicer(a Access) *Slicer {
	return &Slicer{a: a, fs: a.FileStream(), ms: a.MemStream()}
}

// FileStream is the slicer's walk over the view, for callers that count
// the access's bytes by other boundaries; In and Cut reposition it.
func (s *Slicer) FileStream() *layout.Stream { return s.fs }

// In appends to buf this rank's pieces whose file bytes lie in the
// sorted, disjoint ranges ws, in file order, and returns them with the
// data range [lo, hi) they lie in (positions relative to the start of the
// access) and their bytes n: n < hi-lo when other data of the rank falls
// between the ranges.
func (s *Slicer) In(ws []Range, buf []Piece) (_ []Piece, lo, hi, n int64, err error) {
	first := true
	for _, w := range ws {
		var l, h int64
		if buf, l, h, err = s.Cut(w, buf); err != nil || h <= l {
			continue
		}
		if first {
			lo, first = l, false
		}
		hi, n = h, n+h-l
	}
	return buf, lo, hi, n, err
}

// Clip turns a data position of the view into one relative to the
// access, cut to the access.
func (s *Slicer) Clip(d int64) int64 {
	a := s.a
	return min(max(d, a.DataStart), a.DataStart+a.Size) - a.DataStart
}

// Cut appends to buf the pieces whose file bytes lie in w, in file order,
// and returns them with the data positions [lo, hi) they cover.
func (s *Slicer) Cut(w Range, buf []Piece) (_ []Piece, lo, hi int64, err error) {
	a := s.a
	if w.Empty() || a.Size == 0 {
		return buf, 0, 0, nil
	}
	if lo, err = s.fs.DataBefore(w.Start); err != nil {
		return buf, 0, 0, err
	}
	if hi, err = s.fs.DataBefore(w.End); err != nil {
		return buf, 0, 0, err
	}
	lo, hi = s.Clip(lo), s.Clip(hi)
	if hi <= lo {
		return buf, 0, 0, nil
	}
	if err = s.fs.SeekData(a.DataStart + lo); err != nil {
		return buf, 0, 0, err
	}
	if err = s.ms.SeekData(lo); err != nil {
		return buf, 0, 0, err
	}
	// Room for the pieces up front: appending a few hundred thousand
	// pieces one by one regrows the slice by a quarter each time, and the
	// copies cost more than the walk.
	buf = slices.Grow(buf, s.piecesIn(hi-lo))
	err = layout.Zip(s.ms, s.fs, hi-lo, func(m, f, n int64) error {
		buf = append(buf, Piece{Mem: m, Off: f, N: n})
		return nil
	})
	return buf, lo, hi, err
}

// maxPieceGuess bounds piecesIn's guess (24 MiB of pieces): past it the
// slice grows as it fills.
const maxPieceGuess = 1 << 20

// piecesIn guesses how many pieces n data bytes of the access make: the
// blocks per data byte of the view's filetype and of the memory type, which
// overestimates only where the blocks of consecutive tiles merge.
func (s *Slicer) piecesIn(n int64) int {
	guess := float64(2)
	for _, t := range []*layout.Type{s.a.Filetype, s.a.MemType} {
		if t != nil && t.Size() > 0 && !t.IsContiguous() {
			guess += float64(n) * float64(t.NumBlocks()) / float64(t.Size())
		}
	}
	return int(min(guess, float64(n), maxPieceGuess))
}
