package twophase

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/layout"
)

// Own blocks: when every rank's data lies in blocks that no other rank
// touches (coll_perf-style block distributions, whose runs cover whole
// blocks), a collective call needs no plan at all: each rank writes or
// reads its own data. Ranks find this out from the call's entry record
// (adio's Allgather), without the Allreduce of affinity domains: each
// reports how many blocks of the grid (OwnGrid) its data touches and a
// sum of hashes of which. Every block of the span is touched by exactly
// one rank when the counts add up to the span's blocks and the hash sums
// to the sum over all of them; a different multiset passing both is a
// 2^-64 coincidence, and even then no data is lost, since rounds on own
// blocks never read-modify-write: every rank writes only its own bytes.

// ownRunBudget is how many runs of its data a rank walks to count its
// blocks before it gives up (reporting an unknown count): walking costs
// O(runs), and views with many small runs share blocks anyway.
const ownRunBudget = 4096

// OwnGrid is the block size for own blocks: affinity's smallest block,
// rounded up to a multiple of stripe when stripe > 0, so that no two
// ranks write one stripe.
func OwnGrid(stripe int64) int64 {
	b := int64(minAffinityBlock)
	if stripe > 0 {
		b = stripe * ((b + stripe - 1) / stripe)
	}
	return b
}

// blockHash mixes a block index (splitmix64's finalizer), so that sums
// over different sets of blocks differ.
func blockHash(b int64) uint64 {
	z := uint64(b) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// CountOwnBlocks is a rank's report for its access at the given grid.
func CountOwnBlocks(a coll.Access, grid int64) coll.OwnBlocks {
	var o coll.OwnBlocks
	err := eachOwnBlock(a, grid, func(b int64) {
		o.Count++
		o.Hash += blockHash(b)
	})
	if err != nil {
		return coll.OwnBlocks{Count: -1}
	}
	return o
}

// eachOwnBlock calls fn with the index of every block of the grid that
// the access's data touches, in increasing order. It fails after
// ownRunBudget runs, or on runs not in file order.
func eachOwnBlock(a coll.Access, grid int64, fn func(b int64)) error {
	if a.Size == 0 {
		return nil
	}
	fs := layout.NewViewStream(a.Filetype, a.Disp)
	if err := fs.SeekData(a.DataStart); err != nil {
		return err
	}
	next := int64(-1) // the first block not reported yet
	end := int64(-1)  // the end of the previous run
	for left, runs := a.Size, 0; left > 0; runs++ {
		off, n, ok := fs.Next(left)
		switch {
		case !ok:
			return fmt.Errorf("twophase: the view ends %d bytes before the access", left)
		case runs == ownRunBudget:
			return fmt.Errorf("twophase: more than %d runs", ownRunBudget)
		case off < end:
			return fmt.Errorf("twophase: runs not in file order at offset %d", off)
		}
		left, end = left-n, off+n
		for b := max(off/grid, next); b <= (end-1)/grid; b++ {
			fn(b)
		}
		next = max(next, (end-1)/grid+1)
	}
	return nil
}

// OwnBlocksTile reports whether the ranks' reports show every block of
// span touched by exactly one rank (see the package comment above).
func OwnBlocksTile(span coll.Range, grid int64, own []coll.OwnBlocks) bool {
	if span.Empty() || grid <= 0 {
		return false
	}
	var count int64
	var hash uint64
	for _, o := range own {
		if o.Count < 0 {
			return false
		}
		count, hash = count+o.Count, hash+o.Hash
	}
	first, last := span.Start/grid, (span.End-1)/grid
	if count != last-first+1 {
		return false
	}
	var want uint64
	for b := first; b <= last; b++ {
		want += blockHash(b)
	}
	return hash == want
}
