package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"fmt"

	"github.com/collio/collio/layout"
)

// A Recipe rebuilds a derived datatype from its constructor's arguments
// (MPI_Type_get_contents) and the argument types it holds. MPI_File_get_view
// must return a type equal to the view's after the program may have freed
// its own: for a list of 10^5-10^6 blocks (PnetCDF's filetypes) keeping the
// arguments that Layout reads anyway costs nothing more, while
// MPI_Type_dup copies Open MPI's description of every block.
type Recipe struct {
	combiner C.int
	c        contents
}

// LayoutRecipe is Layout, plus a Recipe of t when t is a list of blocks
// (indexed, hindexed, their _block forms, struct); nil otherwise. The
// caller frees the recipe.
func (t Datatype) LayoutRecipe() (*layout.Type, *Recipe, error) {
	lt, r, err := t.decodeKeeping(true)
	if r != nil && !listCombiner(r.combiner) {
		r.Free()
		r = nil
	}
	return lt, r, err
}

func listCombiner(c C.int) bool {
	switch c {
	case C.MPI_COMBINER_INDEXED, C.MPI_COMBINER_HINDEXED, C.MPI_COMBINER_INDEXED_BLOCK,
		C.MPI_COMBINER_HINDEXED_BLOCK, C.MPI_COMBINER_STRUCT:
		return true
	}
	return false
}

// Build makes and commits a new type equal to the one the recipe came
// from; the caller frees it.
func (r *Recipe) Build() (Datatype, error) {
	c := r.c
	if len(c.ints) == 0 {
		return Datatype{}, fmt.Errorf("mpi: recipe of combiner %d has no count", int(r.combiner))
	}
	n := c.ints[0]
	ints := make([]C.int, len(c.ints))
	for i, v := range c.ints {
		ints[i] = C.int(v)
	}
	types := make([]C.MPI_Datatype, len(c.types))
	for i, t := range c.types {
		types[i] = t.t
	}
	// Every list constructor takes at least one type; the counts were
	// checked against the envelope when the type was decoded.
	var addrs *C.MPI_Aint
	if len(c.addrs) > 0 {
		addrs = (*C.MPI_Aint)(&c.addrs[0])
	}
	at := func(i int) *C.int { // nil past the end: a list of no blocks
		if i < len(ints) {
			return &ints[i]
		}
		return nil
	}
	ip := at(1)
	var out C.MPI_Datatype
	var rc C.int
	switch r.combiner {
	case C.MPI_COMBINER_INDEXED: // ints: count, blocklengths, displacements
		rc = C.MPI_Type_indexed(C.int(n), ip, at(1+n), types[0], &out)
	case C.MPI_COMBINER_HINDEXED: // ints: count, blocklengths; addrs: displacements
		rc = C.MPI_Type_create_hindexed(C.int(n), ip, addrs, types[0], &out)
	case C.MPI_COMBINER_INDEXED_BLOCK: // ints: count, blocklength, displacements
		rc = C.MPI_Type_create_indexed_block(C.int(n), ints[1], at(2), types[0], &out)
	case C.MPI_COMBINER_HINDEXED_BLOCK: // ints: count, blocklength; addrs: displacements
		rc = C.MPI_Type_create_hindexed_block(C.int(n), ints[1], addrs, types[0], &out)
	case C.MPI_COMBINER_STRUCT: // ints: count, blocklengths; addrs, types: one per block
		var tp *C.MPI_Datatype
		if len(types) > 0 {
			tp = &types[0]
		}
		rc = C.MPI_Type_create_struct(C.int(n), ip, addrs, tp, &out)
	default:
		return Datatype{}, fmt.Errorf("mpi: no recipe for combiner %d", int(r.combiner))
	}
	if err := check(rc, "MPI_Type_create (recipe)"); err != nil {
		return Datatype{}, err
	}
	if err := check(C.MPI_Type_commit(&out), "MPI_Type_commit"); err != nil {
		C.MPI_Type_free(&out)
		return Datatype{}, err
	}
	return Datatype{out}, nil
}

// Free releases the argument types the recipe holds.
func (r *Recipe) Free() {
	r.c.freeChildren()
	r.c = contents{}
}
