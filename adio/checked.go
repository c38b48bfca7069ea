package adio

import (
	"math"

	"github.com/collio/collio/internal/ioerr"
)

// Byte positions are offsets times sizes plus displacements, all int64.
// Past 2^63-1 they would wrap, and a transfer would land at a small
// offset instead of failing: these report the overflow instead.

// mul64 returns a*b and whether it fits in an int64.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// add64 returns a+b and whether it fits in an int64.
func add64(a, b int64) (int64, bool) {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		return 0, false
	}
	return c, true
}

// dataPos returns the data position (bytes of the view's data before it)
// of etype offset off, and whether a transfer of n bytes there can be
// placed: its data positions and its file offsets, up to its end, fit in
// an int64. Every transfer, seek and byte-offset query passes here before
// any position is computed unchecked.
func dataPos(v View, off, n int64) (int64, bool) {
	pos, ok := mul64(off, v.Etype.Size())
	if !ok {
		return 0, false
	}
	end, ok := add64(pos, n)
	if !ok {
		return 0, false
	}
	ft := v.Filetype
	size := ft.Size()
	if size == 0 {
		return pos, true // no data byte has a file offset
	}
	if ft.IsContiguous() {
		base, ok := add64(v.Disp, ft.LB())
		if ok {
			_, ok = add64(base, end)
		}
		return pos, ok
	}
	// The end of the data of the tile that holds the last byte bounds
	// the transfer's file range.
	last := pos
	if n > 0 {
		last = end - 1
	}
	tile, ok := mul64(last/size, ft.Extent())
	if ok {
		tile, ok = add64(tile, v.Disp)
	}
	if ok {
		_, ok = add64(tile, ft.TrueLB()+ft.TrueExtent())
	}
	return pos, ok
}

// rangeErr is the error of a transfer of n bytes at etype offset off that
// dataPos cannot place.
func (f *File) rangeErr(op string, v View, off, n int64) error {
	if n == 0 {
		return f.errf(ioerr.ErrArg, op, "offset %d is out of range: its byte offset (etypes of %d bytes, view displacement %d) would be past the largest file offset, 2^63-1",
			off, v.Etype.Size(), v.Disp)
	}
	return f.errf(ioerr.ErrArg, op, "offset %d is out of range: %d bytes there (etypes of %d bytes, view displacement %d) would end past the largest file offset, 2^63-1",
		off, n, v.Etype.Size(), v.Disp)
}
