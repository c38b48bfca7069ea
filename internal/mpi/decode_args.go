package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"fmt"

	"github.com/collio/collio/layout"
)

// Checks on get_contents results before indexing them: they come from the
// MPI library, but a wrong assumption about a layout must give an error,
// not a panic.

// want checks the exact numbers of ints, addresses and types.
func (c contents) want(ni, na, nt int) error {
	if len(c.ints) != ni || len(c.addrs) != na || len(c.types) != nt {
		return fmt.Errorf("get_contents returned %d ints, %d addresses, %d types; expected %d, %d, %d",
			len(c.ints), len(c.addrs), len(c.types), ni, na, nt)
	}
	return nil
}

// count reads the leading count n in ints[0] and checks the lengths that
// shape(n) gives.
func (c contents) count(shape func(n int) (ni, na, nt int)) (int, error) {
	if len(c.ints) == 0 || c.ints[0] < 0 {
		return 0, fmt.Errorf("get_contents returned no count")
	}
	n := c.ints[0]
	return n, c.want(shape(n))
}

func layoutOrder(o int) (layout.Order, error) {
	switch o {
	case C.MPI_ORDER_C:
		return layout.OrderC, nil
	case C.MPI_ORDER_FORTRAN:
		return layout.OrderFortran, nil
	}
	return 0, fmt.Errorf("unknown array order %d", o)
}

// buildSubarray decodes ints = [nd, sizes..., subsizes..., starts..., order].
func buildSubarray(c contents, old *layout.Type) (*layout.Type, error) {
	if len(c.ints) == 0 || c.ints[0] < 0 {
		return nil, fmt.Errorf("get_contents returned no dimension count")
	}
	nd := c.ints[0]
	if err := c.want(2+3*nd, 0, 1); err != nil {
		return nil, err
	}
	order, err := layoutOrder(c.ints[1+3*nd])
	if err != nil {
		return nil, err
	}
	dims := c.ints[1 : 1+3*nd]
	return layout.Subarray(dims[:nd], dims[nd:2*nd], dims[2*nd:], order, old)
}

// buildDarray decodes ints = [size, rank, nd, gsizes..., distribs...,
// dargs..., psizes..., order].
func buildDarray(c contents, old *layout.Type) (*layout.Type, error) {
	if len(c.ints) < 3 || c.ints[2] < 0 {
		return nil, fmt.Errorf("get_contents returned no dimension count")
	}
	nd := c.ints[2]
	if err := c.want(4+4*nd, 0, 1); err != nil {
		return nil, err
	}
	order, err := layoutOrder(c.ints[3+4*nd])
	if err != nil {
		return nil, err
	}
	dims := c.ints[3 : 3+4*nd]
	distribs := make([]layout.Distrib, nd)
	dargs := make([]int, nd)
	for i := range nd {
		switch dims[nd+i] {
		case C.MPI_DISTRIBUTE_BLOCK:
			distribs[i] = layout.DistribBlock
		case C.MPI_DISTRIBUTE_CYCLIC:
			distribs[i] = layout.DistribCyclic
		case C.MPI_DISTRIBUTE_NONE:
			distribs[i] = layout.DistribNone
		default:
			return nil, fmt.Errorf("unknown distribution %d in dimension %d", dims[nd+i], i)
		}
		dargs[i] = dims[2*nd+i]
		if dargs[i] == C.MPI_DISTRIBUTE_DFLT_DARG {
			dargs[i] = layout.DargDefault
		}
	}
	return layout.Darray(c.ints[0], c.ints[1], dims[:nd], distribs, dargs, dims[3*nd:], order, old)
}
