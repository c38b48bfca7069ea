package place

import (
	"fmt"

	"github.com/collio/collio/layout"
	"github.com/collio/collio/record"
)

// Grid is a Cartesian process grid over a global array split in blocks
// (the 2-D/3-D block decomposition of coll_perf, Tile I/O and BTIO-like
// codes): Procs[i] ranks along dimension i of an array of Sizes[i]
// elements of Elem bytes, stored in C order, ranks numbered row-major
// over the grid (MPI_Cart_create's order). Remainders go to the first
// ranks of a dimension.
type Grid struct {
	Sizes, Procs []int
	Elem         int
	// Order, when set, is the grid position of each rank (a communicator
	// that reorders ranks, like the thesis's modified Tile I/O): rank r
	// owns the block at row-major position Order[r].
	Order []int
}

// Ranks is the number of ranks of the grid.
func (g Grid) Ranks() int {
	n := 1
	for _, p := range g.Procs {
		n *= p
	}
	return n
}

// Accesses returns every rank's access: its block as a subarray view.
func (g Grid) Accesses() ([]Access, error) {
	switch {
	case len(g.Sizes) < 1 || len(g.Sizes) != len(g.Procs):
		return nil, fmt.Errorf("place: the array has %d dimensions and the process grid %d", len(g.Sizes), len(g.Procs))
	case g.Elem < 1:
		return nil, fmt.Errorf("place: element size %d; need at least 1 byte", g.Elem)
	}
	for i := range g.Sizes {
		if g.Procs[i] < 1 || g.Sizes[i] < g.Procs[i] {
			return nil, fmt.Errorf("place: dimension %d: %d elements cannot be split over %d ranks", i, g.Sizes[i], g.Procs[i])
		}
	}
	n := g.Ranks()
	if g.Order != nil {
		if err := checkPermutation(g.Order, n); err != nil {
			return nil, err
		}
	}
	elem := layout.Bytes(int64(g.Elem))
	acc := make([]Access, n)
	sub, start := make([]int, len(g.Sizes)), make([]int, len(g.Sizes))
	for r := range acc {
		pos := r
		if g.Order != nil {
			pos = g.Order[r]
		}
		elems := int64(1)
		for d := len(g.Sizes) - 1; d >= 0; d-- {
			c := pos % g.Procs[d]
			pos /= g.Procs[d]
			base, rem := g.Sizes[d]/g.Procs[d], g.Sizes[d]%g.Procs[d]
			sub[d] = base
			if c < rem {
				sub[d]++
			}
			start[d] = c*base + min(c, rem)
			elems *= int64(sub[d])
		}
		t, err := layout.Subarray(g.Sizes, sub, start, layout.OrderC, elem)
		if err != nil {
			return nil, fmt.Errorf("place: rank %d: %w", r, err)
		}
		acc[r] = Access{Filetype: t, Size: elems * int64(g.Elem)}
	}
	return acc, nil
}

func checkPermutation(order []int, n int) error {
	if len(order) != n {
		return fmt.Errorf("place: rank order lists %d ranks for a grid of %d", len(order), n)
	}
	seen := make([]bool, n)
	for r, p := range order {
		if p < 0 || p >= n || seen[p] {
			return fmt.Errorf("place: rank order: rank %d at position %d, not a permutation of 0..%d", r, p, n-1)
		}
		seen[p] = true
	}
	return nil
}

// IOR is IOR's shared-file layout: Segments segments, in each one block of
// Block bytes per rank in rank order (rank r's data of segment s at
// (s*ranks + r)*Block). One segment is the segmented (contiguous) case,
// several the strided one.
type IOR struct {
	Ranks, Segments int
	Block           int64
}

// Accesses returns every rank's access over all segments.
func (p IOR) Accesses() ([]Access, error) {
	switch {
	case p.Ranks < 1:
		return nil, fmt.Errorf("place: IOR with %d ranks", p.Ranks)
	case p.Segments < 1:
		return nil, fmt.Errorf("place: IOR with %d segments; need at least 1", p.Segments)
	case p.Block < 1:
		return nil, fmt.Errorf("place: IOR block of %d bytes; need at least 1", p.Block)
	}
	t, err := layout.HVector(p.Segments, 1, int64(p.Ranks)*p.Block, layout.Bytes(p.Block))
	if err != nil {
		return nil, fmt.Errorf("place: IOR view: %w", err)
	}
	acc := make([]Access, p.Ranks)
	for r := range acc {
		acc[r] = Access{Disp: int64(r) * p.Block, Filetype: t, Size: int64(p.Segments) * p.Block}
	}
	return acc, nil
}

// FromRecord turns one recorded collective call (record.ReadCall: every
// rank's side) into the ranks' accesses.
func FromRecord(calls []record.Call) ([]Access, error) {
	acc := make([]Access, len(calls))
	for r, c := range calls {
		t, err := c.Filetype()
		if err != nil {
			return nil, fmt.Errorf("place: rank %d: %w", r, err)
		}
		acc[r] = Access{Disp: c.Disp, Filetype: t, DataStart: c.Start, Size: c.Bytes}
	}
	return acc, nil
}
