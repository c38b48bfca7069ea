package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import "github.com/collio/collio/internal/ioerr"

// Order is the storage order of a multi-dimensional array.
type Order int

// Array orders, with MPI's values.
const (
	OrderC       Order = C.MPI_ORDER_C
	OrderFortran Order = C.MPI_ORDER_FORTRAN
)

// Distrib is how one dimension of a distributed array is split.
type Distrib int

// Distributions and the default distribution argument, with MPI's values.
const (
	DistribBlock  Distrib = C.MPI_DISTRIBUTE_BLOCK
	DistribCyclic Distrib = C.MPI_DISTRIBUTE_CYCLIC
	DistribNone   Distrib = C.MPI_DISTRIBUTE_NONE
	DargDefault           = C.MPI_DISTRIBUTE_DFLT_DARG
)

func (o Order) valid() bool { return o == OrderC || o == OrderFortran }

// TypeSubarray is MPI_Type_create_subarray: the block subsizes at starts
// of an array of sizes elements of old. Every subsize must be at least 1.
func TypeSubarray(sizes, subsizes, starts []int, order Order, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_subarray"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	if err := checkSubarray(op, sizes, subsizes, starts, order); err != nil {
		return nullType(), err
	}
	nd := C.int(len(sizes))
	sz, _ := cInts(op, "sizes", sizes, 1)
	sub, _ := cInts(op, "subsizes", subsizes, 1)
	st, _ := cInts(op, "starts", starts, 0)
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_subarray(nd, intPtr(sz), intPtr(sub), intPtr(st), C.int(order), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

func checkSubarray(op string, sizes, subsizes, starts []int, order Order) error {
	if len(sizes) == 0 {
		return argError(op, "no dimensions")
	}
	if err := sameLen(op, len(sizes), len(subsizes), "sizes", "subsizes"); err != nil {
		return err
	}
	if err := sameLen(op, len(sizes), len(starts), "sizes", "starts"); err != nil {
		return err
	}
	if !order.valid() {
		return argError(op, "invalid order %d", int(order))
	}
	if _, err := cInts(op, "sizes", sizes, 1); err != nil {
		return err
	}
	if _, err := cInts(op, "subsizes", subsizes, 1); err != nil {
		return err
	}
	if _, err := cInts(op, "starts", starts, 0); err != nil {
		return err
	}
	for i := range sizes {
		if subsizes[i] > sizes[i] || starts[i] > sizes[i]-subsizes[i] {
			return argError(op, "dimension %d: block of %d at %d does not fit in %d", i, subsizes[i], starts[i], sizes[i])
		}
	}
	return nil
}

// TypeDarray is MPI_Type_create_darray: the part of a gsizes array of old
// that process rank of a size-process grid psizes owns.
func TypeDarray(size, rank int, gsizes []int, distribs []Distrib, dargs, psizes []int, order Order, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_darray"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	if err := checkDarray(op, size, rank, gsizes, distribs, dargs, psizes, order); err != nil {
		return nullType(), err
	}
	// Open MPI 4.1 fails MPI_ERR_TYPE (fatal here) for an empty oldtype.
	if n, err := old.Size(); err != nil || n == 0 {
		return nullType(), ioerr.New(ioerr.ErrType, op, "the input datatype has no data")
	}
	gs, _ := cInts(op, "gsizes", gsizes, 1)
	ds := make([]C.int, len(distribs))
	for i, d := range distribs {
		ds[i] = C.int(d)
	}
	da, _ := cInts(op, "dargs", dargs, DargDefault)
	ps, _ := cInts(op, "psizes", psizes, 1)
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_darray(C.int(size), C.int(rank), C.int(len(gsizes)), intPtr(gs), intPtr(ds),
		intPtr(da), intPtr(ps), C.int(order), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

func checkDarray(op string, size, rank int, gsizes []int, distribs []Distrib, dargs, psizes []int, order Order) error {
	if _, err := cInt(op, "size", size, 1); err != nil {
		return err
	}
	if rank < 0 || rank >= size {
		return argError(op, "rank %d not in [0, %d)", rank, size)
	}
	nd := len(gsizes)
	if nd == 0 {
		return argError(op, "no dimensions")
	}
	for _, l := range []struct {
		n    int
		name string
	}{{len(distribs), "distribs"}, {len(dargs), "dargs"}, {len(psizes), "psizes"}} {
		if err := sameLen(op, nd, l.n, "gsizes", l.name); err != nil {
			return err
		}
	}
	if !order.valid() {
		return argError(op, "invalid order %d", int(order))
	}
	if _, err := cInts(op, "gsizes", gsizes, 1); err != nil {
		return err
	}
	if _, err := cInts(op, "psizes", psizes, 1); err != nil {
		return err
	}
	procs := 1
	for i := range nd {
		procs *= psizes[i]
		if procs > size {
			break
		}
		if err := checkDarrayDim(op, i, gsizes[i], distribs[i], dargs[i], psizes[i]); err != nil {
			return err
		}
	}
	if procs != size {
		return argError(op, "process grid %v does not have %d processes", psizes, size)
	}
	return nil
}

func checkDarrayDim(op string, i, gsize int, d Distrib, darg, psize int) error {
	if darg != DargDefault && (darg < 1 || darg > 1<<31-1) {
		return argError(op, "dargs[%d] = %d: must be positive or DargDefault", i, darg)
	}
	switch d {
	case DistribBlock:
		if darg != DargDefault && darg*psize < gsize {
			return argError(op, "dimension %d: BLOCK(%d) on %d processes cannot cover %d elements", i, darg, psize, gsize)
		}
	case DistribCyclic:
	case DistribNone:
		if psize != 1 {
			return argError(op, "dimension %d: DISTRIBUTE_NONE needs 1 process, grid has %d", i, psize)
		}
	default:
		return argError(op, "distribs[%d] = %d is not a distribution", i, int(d))
	}
	return nil
}
