package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

// Constructors mirroring MPI's, for tests and benchmarks that need types
// as an application would build them. Every constructor returns a
// committed type (free it with Free) or MPI_DATATYPE_NULL and an error.
// Arguments are validated in Go before MPI sees them.

// TypeContiguous is MPI_Type_contiguous.
func TypeContiguous(count int, old Datatype) (Datatype, error) {
	const op = "MPI_Type_contiguous"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	n, err := cInt(op, "count", count, 0)
	if err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_contiguous(n, old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeVector is MPI_Type_vector; stride is in extents of old.
func TypeVector(count, blocklen, stride int, old Datatype) (Datatype, error) {
	const op = "MPI_Type_vector"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	n, err := cInt(op, "count", count, 0)
	if err != nil {
		return nullType(), err
	}
	bl, err := cInt(op, "blocklength", blocklen, 0)
	if err != nil {
		return nullType(), err
	}
	st, err := cDispls(op, []int{stride})
	if err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_vector(n, bl, st[0], old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeHvector is MPI_Type_create_hvector; stride is in bytes.
func TypeHvector(count, blocklen int, stride int64, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_hvector"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	n, err := cInt(op, "count", count, 0)
	if err != nil {
		return nullType(), err
	}
	bl, err := cInt(op, "blocklength", blocklen, 0)
	if err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_hvector(n, bl, C.MPI_Aint(stride), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeIndexed is MPI_Type_indexed; displacements are in extents of old.
func TypeIndexed(blocklens, displs []int, old Datatype) (Datatype, error) {
	const op = "MPI_Type_indexed"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	if err := sameLen(op, len(blocklens), len(displs), "blocklens", "displs"); err != nil {
		return nullType(), err
	}
	n, err := count(op, len(blocklens))
	if err != nil {
		return nullType(), err
	}
	bl, err := cInts(op, "blocklens", blocklens, 0)
	if err != nil {
		return nullType(), err
	}
	ds, err := cDispls(op, displs)
	if err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_indexed(n, intPtr(bl), intPtr(ds), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeHindexed is MPI_Type_create_hindexed; displacements are in bytes.
func TypeHindexed(blocklens []int, displs []int64, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_hindexed"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	if err := sameLen(op, len(blocklens), len(displs), "blocklens", "displs"); err != nil {
		return nullType(), err
	}
	n, err := count(op, len(blocklens))
	if err != nil {
		return nullType(), err
	}
	bl, err := cInts(op, "blocklens", blocklens, 0)
	if err != nil {
		return nullType(), err
	}
	ds := cAints(displs)
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_hindexed(n, intPtr(bl), aintPtr(ds), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeIndexedBlock is MPI_Type_create_indexed_block; displacements are in
// extents of old.
func TypeIndexedBlock(blocklen int, displs []int, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_indexed_block"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	n, err := count(op, len(displs))
	if err != nil {
		return nullType(), err
	}
	bl, err := cInt(op, "blocklength", blocklen, 0)
	if err != nil {
		return nullType(), err
	}
	ds, err := cDispls(op, displs)
	if err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_indexed_block(n, bl, intPtr(ds), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeHindexedBlock is MPI_Type_create_hindexed_block; displacements are
// in bytes.
func TypeHindexedBlock(blocklen int, displs []int64, old Datatype) (Datatype, error) {
	const op = "MPI_Type_create_hindexed_block"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	n, err := count(op, len(displs))
	if err != nil {
		return nullType(), err
	}
	bl, err := cInt(op, "blocklength", blocklen, 0)
	if err != nil {
		return nullType(), err
	}
	ds := cAints(displs)
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_hindexed_block(n, bl, aintPtr(ds), old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeStruct is MPI_Type_create_struct; displacements are in bytes.
func TypeStruct(blocklens []int, displs []int64, types []Datatype) (Datatype, error) {
	const op = "MPI_Type_create_struct"
	if err := sameLen(op, len(blocklens), len(displs), "blocklens", "displs"); err != nil {
		return nullType(), err
	}
	if err := sameLen(op, len(blocklens), len(types), "blocklens", "types"); err != nil {
		return nullType(), err
	}
	n, err := count(op, len(blocklens))
	if err != nil {
		return nullType(), err
	}
	bl, err := cInts(op, "blocklens", blocklens, 0)
	if err != nil {
		return nullType(), err
	}
	ts := make([]C.MPI_Datatype, len(types))
	for i, t := range types {
		if err := oldType(op, t); err != nil {
			return nullType(), argError(op, "types[%d] is MPI_DATATYPE_NULL", i)
		}
		ts[i] = t.t
	}
	var pt *C.MPI_Datatype
	if len(ts) > 0 {
		pt = &ts[0]
	}
	ds := cAints(displs)
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_struct(n, intPtr(bl), aintPtr(ds), pt, &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeResized is MPI_Type_create_resized.
func TypeResized(old Datatype, lb, extent int64) (Datatype, error) {
	const op = "MPI_Type_create_resized"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_create_resized(old.t, C.MPI_Aint(lb), C.MPI_Aint(extent), &nt)
	return committed(Datatype{nt}, rc, op)
}

// TypeDup is MPI_Type_dup.
func TypeDup(old Datatype) (Datatype, error) {
	const op = "MPI_Type_dup"
	if err := oldType(op, old); err != nil {
		return nullType(), err
	}
	var nt C.MPI_Datatype
	rc := C.MPI_Type_dup(old.t, &nt)
	return committed(Datatype{nt}, rc, op)
}
