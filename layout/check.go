package layout

import "github.com/collio/collio/internal/ioerr"

// CheckFiletype applies MPI's rule for etypes and filetypes: data offsets are
// non-negative and blocks are monotonically non-decreasing and do not
// overlap, also across tiles (the extent covers the data span). The accept
// path is O(1) thanks to cached flags; the error path walks blocks to name
// the first offending offset.
func (t *Type) CheckFiletype() error {
	const op = "filetype"
	if t.Size() == 0 {
		return nil
	}
	s := t.root.sum()
	if !s.mono || s.lo < 0 {
		var prevEnd int64
		for off, n := range t.Blocks() {
			if off < 0 {
				return ioerr.New(ioerr.ErrType, op, "block at offset %d has a negative displacement", off)
			}
			if off < prevEnd {
				return ioerr.New(ioerr.ErrType, op,
					"block at offset %d overlaps or precedes the previous block ending at %d", off, prevEnd)
			}
			prevEnd = off + n
		}
	}
	if s.lo+t.Extent() < s.hi {
		return ioerr.New(ioerr.ErrType, op,
			"extent %d is smaller than the data span: the second tile starts at offset %d, before the first ends at %d",
			t.Extent(), s.lo+t.Extent(), s.hi)
	}
	return nil
}
