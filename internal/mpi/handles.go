// Package mpi is collio's cgo binding to the host MPI library (built with
// pkg-config ompi-c). It is the only package of collio, besides the C shared
// library and this package's test support (cdatatypes), that imports "C"
// for MPI. Its handle types never expose C types.
package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Comm collio_comm_world(void) { return MPI_COMM_WORLD; }
// static MPI_Comm collio_comm_null(void) { return MPI_COMM_NULL; }
// static MPI_Datatype collio_type_null(void) { return MPI_DATATYPE_NULL; }
// static MPI_Datatype collio_type_byte(void) { return MPI_BYTE; }
import "C"

import "unsafe"

// Comm is an MPI communicator handle.
type Comm struct {
	c C.MPI_Comm
}

// Datatype is an MPI datatype handle.
type Datatype struct {
	t C.MPI_Datatype
}

// World returns MPI_COMM_WORLD.
func World() Comm { return Comm{C.collio_comm_world()} }

// CommFromPointer wraps a raw Open MPI communicator pointer (an escape
// hatch for adapters such as the gompi one; Open MPI only).
func CommFromPointer(p unsafe.Pointer) Comm { return Comm{C.MPI_Comm(p)} }

// Pointer returns the raw handle (Open MPI: a pointer).
func (c Comm) Pointer() unsafe.Pointer { return unsafe.Pointer(c.c) }

// The null handles are link-time constants (Open MPI: addresses of its
// globals), read once rather than by a cgo call per check: IsNull runs in
// every transfer from C.
var (
	commNull = C.collio_comm_null()
	typeNull = C.collio_type_null()
)

// IsNull reports whether c is MPI_COMM_NULL.
func (c Comm) IsNull() bool { return c.c == commNull }

// Byte is MPI_BYTE.
func Byte() Datatype { return Datatype{C.collio_type_byte()} }

// DatatypeFromPointer wraps a raw Open MPI datatype pointer.
func DatatypeFromPointer(p unsafe.Pointer) Datatype { return Datatype{C.MPI_Datatype(p)} }

// Pointer returns the raw handle (Open MPI: a pointer).
func (t Datatype) Pointer() unsafe.Pointer { return unsafe.Pointer(t.t) }

// IsNull reports whether t is MPI_DATATYPE_NULL.
func (t Datatype) IsNull() bool { return t.t == typeNull }
