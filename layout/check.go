package layout

import "github.com/collio/collio/internal/ioerr"

// CheckFiletype applies MPI's rule for etypes and filetypes: data offsets are
// non-negative and blocks are monotonically non-decreasing and do not
// overlap. It does not require the extent to cover the data span: such a
// filetype is accepted (ROMIO and OMPIO accept it, and PnetCDF builds one
// for every noncontiguous access), but only its first tile can be used
// (see TilesOverlap and NewViewStream). The accept path is O(1) thanks to
// cached flags; the error path walks blocks to name the first offending
// offset.
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
	return nil
}

// TilesOverlap reports whether tiling the type overlaps: its extent is
// smaller than its data span, so the second tile starts before the first
// ends. A file view with such a filetype can address only its first tile.
func (t *Type) TilesOverlap() bool {
	if t.Size() == 0 {
		return false
	}
	s := t.root.sum()
	return s.lo+t.Extent() < s.hi
}

// TileError describes an access that reaches past the first tile of a
// filetype whose tiles overlap.
func TileError(t *Type, pos int64) error {
	return ioerr.New(ioerr.ErrType, "view",
		"the filetype's extent %d is smaller than its data span, so tiles would overlap: only its first tile (%d bytes of data) can be accessed, and this access reaches data byte %d",
		t.Extent(), t.Size(), pos)
}
