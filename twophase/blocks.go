package twophase

import (
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/layout"
)

// blockBytes sets keys[i] to OwnerKey(this rank's bytes in block i of
// span, rank), for the blocks that meet the rank's own access range. It
// walks the rank's pieces while they are fewer than the blocks (large
// runs: a few steps per run), else asks the view for the data before each
// block boundary (tiny pieces: O(log) per block).
func blockBytes(s *coll.Slicer, j *coll.Job, span coll.Range, block int64, keys []int64, rank int) error {
	a := j.Access
	own := j.Ranges[rank]
	own = coll.Range{Start: max(own.Start, span.Start), End: min(own.End, span.End)}
	if own.Empty() || a.Size == 0 {
		return nil
	}
	first := int(own.Start/block - span.Start/block)
	last := int((own.End-1)/block - span.Start/block)
	if done, err := blockBytesByPieces(s.FileStream(), a, own, span, block, keys, pieceBudget(last-first+1)); err != nil || done {
		if err == nil {
			for i := first; i <= last; i++ {
				keys[i] = OwnerKey(keys[i], rank)
			}
		}
		return err
	}
	clear(keys[first : last+1])
	fs := s.FileStream()
	d, err := fs.DataBefore(BlockRange(span, block, first).Start)
	if err != nil {
		return err
	}
	prev := s.Clip(d)
	for i := first; i <= last; i++ {
		if d, err = fs.DataBefore(BlockRange(span, block, i).End); err != nil {
			return err
		}
		cur := s.Clip(d)
		keys[i] = OwnerKey(cur-prev, rank)
		prev = cur
	}
	return nil
}

// pieceBudget is how many pieces blockBytes walks before it counts by
// block boundaries instead. A variable for tests.
var pieceBudget = func(blocks int) int { return blocks }

// blockBytesByPieces adds the rank's bytes per block into keys by walking
// its pieces with fs, and gives up (false) after budget pieces or at a
// piece outside own (the rank's access range).
func blockBytesByPieces(fs *layout.Stream, a coll.Access, own, span coll.Range, block int64, bytes []int64, budget int) (bool, error) {
	if err := fs.SeekData(a.DataStart); err != nil {
		return false, err
	}
	base := span.Start / block
	for left, pieces := a.Size, 0; left > 0; pieces++ {
		off, n, ok := fs.Next(left)
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
