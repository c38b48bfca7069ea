package layout

import "math"

// PiecesOf estimates how many contiguous file pieces n data bytes of a
// view with filetype ft touch, from data byte start of the view (offset
// times the etype size), without walking the pieces: a contiguous filetype
// gives one piece; a whole tile gives its NumBlocks; a partial tile its
// share of NumBlocks by bytes (at least one); tiles whose data reaches
// both ends of the extent join their neighbours. Exact for contiguous
// filetypes and for whole tiles of filetypes whose blocks are in file
// order; for partial tiles, exact when the blocks are of equal size.
func PiecesOf(ft *Type, start, n int64) int64 {
	size := ft.Size()
	if n <= 0 || size <= 0 {
		return 0
	}
	if ft.IsContiguous() {
		return 1
	}
	nb := ft.NumBlocks()
	part := func(b int64) int64 {
		if b >= size {
			return nb
		}
		p := int64(math.Ceil(float64(b) * float64(nb) / float64(size)))
		return min(max(p, 1), nb)
	}
	t0, t1 := start/size, (start+n-1)/size
	if t0 == t1 {
		return part(n)
	}
	p := part(size-start%size) + part(start+n-t1*size) + (t1-t0-1)*nb
	if ft.TrueLB() == ft.LB() && ft.TrueLB()+ft.TrueExtent() == ft.UB() {
		p -= t1 - t0 // each tile boundary merges two pieces
	}
	return max(p, 1)
}
