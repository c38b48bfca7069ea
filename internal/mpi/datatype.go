package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/collio/collio/internal/ioerr"
)

// Datatype calls report errors through MPI_COMM_WORLD's error handler,
// which aborts the job by default. Every method therefore validates its
// handle in Go first, so that bad input comes back as an error.

// unusable reports MPI_DATATYPE_NULL and the zero Datatype (a nil
// handle, also what Open MPI's MPI_Type_f2c gives for a bad index).
func (t Datatype) unusable() bool { return t.t == nil || t.IsNull() }

// errNullType is returned for operations on an unusable handle.
func errNullType(op string) error {
	return ioerr.New(ioerr.ErrType, op, "datatype is MPI_DATATYPE_NULL or not a datatype handle")
}

// Size is MPI_Type_size_x: the number of data bytes in one instance.
func (t Datatype) Size() (int64, error) {
	if t.unusable() {
		return 0, errNullType("MPI_Type_size_x")
	}
	var n C.MPI_Count
	if err := check(C.MPI_Type_size_x(t.t, &n), "MPI_Type_size_x"); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// Extent is MPI_Type_get_extent_x: the lower bound and extent that govern
// how consecutive instances of t are laid out.
func (t Datatype) Extent() (lb, extent int64, err error) {
	if t.unusable() {
		return 0, 0, errNullType("MPI_Type_get_extent_x")
	}
	var l, e C.MPI_Count
	if err := check(C.MPI_Type_get_extent_x(t.t, &l, &e), "MPI_Type_get_extent_x"); err != nil {
		return 0, 0, err
	}
	return int64(l), int64(e), nil
}

// TrueExtent is MPI_Type_get_true_extent_x: the bounds of the bytes t
// actually touches, ignoring resizing.
func (t Datatype) TrueExtent() (lb, extent int64, err error) {
	if t.unusable() {
		return 0, 0, errNullType("MPI_Type_get_true_extent_x")
	}
	var l, e C.MPI_Count
	if err := check(C.MPI_Type_get_true_extent_x(t.t, &l, &e), "MPI_Type_get_true_extent_x"); err != nil {
		return 0, 0, err
	}
	return int64(l), int64(e), nil
}

// Commit is MPI_Type_commit. Committing a committed or predefined type is
// allowed and does nothing.
func (t Datatype) Commit() error {
	if t.unusable() {
		return errNullType("MPI_Type_commit")
	}
	return check(C.MPI_Type_commit(&t.t), "MPI_Type_commit")
}

// Free is MPI_Type_free. Predefined types cannot be freed; that is
// reported as an error instead of reaching MPI (where it would abort).
// The receiver is a copy: callers must not use their handle afterwards.
func (t Datatype) Free() error {
	if t.unusable() {
		return errNullType("MPI_Type_free")
	}
	predefined, err := t.isPredefined()
	if err != nil {
		return err
	}
	if predefined {
		return ioerr.New(ioerr.ErrType, "MPI_Type_free", "cannot free predefined datatype %s", t.Name())
	}
	return check(C.MPI_Type_free(&t.t), "MPI_Type_free")
}

// Fint is MPI_Type_c2f: the Fortran integer handle, which is how datatype
// handles cross package and language boundaries.
func (t Datatype) Fint() int32 {
	if t.t == nil {
		return int32(C.MPI_Type_c2f(nullType().t)) // the zero Datatype is no handle
	}
	return int32(C.MPI_Type_c2f(t.t))
}

// DatatypeFromFint is MPI_Type_f2c.
func DatatypeFromFint(f int32) Datatype { return Datatype{C.MPI_Type_f2c(C.MPI_Fint(f))} }

// Name is MPI_Type_get_name, for messages. Unnamed derived types give "".
func (t Datatype) Name() string {
	if t.unusable() {
		return "MPI_DATATYPE_NULL"
	}
	buf := make([]byte, C.MPI_MAX_OBJECT_NAME+1)
	var n C.int
	if C.MPI_Type_get_name(t.t, (*C.char)(unsafe.Pointer(&buf[0])), &n) != C.MPI_SUCCESS || n < 0 {
		return ""
	}
	return string(buf[:int(n)])
}

// isPredefined reports whether t is owned by MPI and must not be freed:
// a named type, or one from MPI_Type_create_f90_* (MPI-3.1 §17.1.9).
func (t Datatype) isPredefined() (bool, error) {
	env, err := t.envelope()
	if err != nil {
		return false, err
	}
	switch env.combiner {
	case C.MPI_COMBINER_NAMED, C.MPI_COMBINER_F90_REAL, C.MPI_COMBINER_F90_COMPLEX, C.MPI_COMBINER_F90_INTEGER:
		return true, nil
	}
	return false, nil
}

// describe names t for error messages: its MPI name if it has one.
func (t Datatype) describe() string {
	if n := t.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("datatype(fint %d)", t.Fint())
}
