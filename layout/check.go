package layout

import "github.com/collio/collio/internal/ioerr"

// CheckFiletype applies MPI's rule for etypes and filetypes: data offsets are
// non-negative and blocks are monotonically non-decreasing and do not
// overlap. It does not require the extent to cover the data span: such a
// filetype is accepted (ROMIO and OMPIO accept it, and PnetCDF builds one
// for every noncontiguous access), but only its first tile can be used
// (see TilesOverlap and NewViewStream). The accept path is O(1) thanks to
// cached flags; the error path searches the tree for the first offending
// block (firstDisorder), in time of the representation, not of the blocks.
func (t *Type) CheckFiletype() error {
	const op = "filetype"
	if t.Size() == 0 {
		return nil
	}
	s := t.root.sum()
	if !s.mono || s.lo < 0 {
		off, prevEnd, _, found := firstDisorder(t.root, 0, 0)
		switch {
		case !found:
			return ioerr.New(ioerr.ErrType, op, "blocks are not in monotonically non-decreasing order")
		case off < 0:
			return ioerr.New(ioerr.ErrType, op, "block at offset %d has a negative displacement", off)
		}
		return ioerr.New(ioerr.ErrType, op,
			"block at offset %d overlaps or precedes the previous block ending at %d", off, prevEnd)
	}
	return nil
}

// firstDisorder finds, in typemap order, the first block of n (shifted by
// shift) that has a negative offset or starts before prevEnd, the end of
// the block before it; without one it returns the end of n's last block.
// Ordered subtrees are passed in O(1) from their cached summary, and a
// repeat's copies after the second are translations of the second, so that
// a repeat of 2^60 blocks costs no more than two copies of its body.
func firstDisorder(n node, shift, prevEnd int64) (off, prev, end int64, found bool) {
	s := n.sum()
	if s.mono && s.lo+shift >= 0 && s.lo+shift >= prevEnd {
		return 0, 0, s.hi + shift, false
	}
	at := func(p piece) bool {
		off = p.off + shift
		if off < 0 || off < prevEnd {
			return true
		}
		prevEnd = off + p.n
		return false
	}
	switch v := n.(type) {
	case *blockNode:
		if at(piece{v.lo, v.size}) {
			return off, prevEnd, 0, true
		}
	case *listNode:
		for i := range v.offs {
			if at(v.block(i)) {
				return off, prevEnd, 0, true
			}
		}
	case *seqNode:
		for _, it := range v.items {
			if off, prev, prevEnd, found = firstDisorder(it, shift, prevEnd); found {
				return off, prev, 0, true
			}
		}
	case *repeatNode:
		for i := range min64(v.count, 2) {
			if off, prev, prevEnd, found = firstDisorder(v.body, shift+v.off+i*v.stride, prevEnd); found {
				return off, prev, 0, true
			}
		}
		if v.count > 2 {
			prevEnd += (v.count - 2) * v.stride
		}
	}
	return 0, 0, prevEnd, false
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
