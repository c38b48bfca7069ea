//go:build cgo

// Package gompiadapt lets programs that use github.com/sbromberger/gompi
// (v0.2.0) open collio files on gompi communicators, and hand collio's MPI
// communicators to gompi.
//
// gompi keeps its MPI_Comm in an unexported field, so the conversion reads
// and writes that field through unsafe. That is only sound while the field
// keeps its place and kind: init checks gompi's Communicator layout with
// reflect and panics if it changed, rather than corrupting memory later.
// Like collio's binding, it assumes Open MPI, where an MPI_Comm is a
// pointer.
//
// MPI itself must be initialised once. Either let gompi do it
// (gompi.Start(true), which collio.Init then leaves alone) and finalise it
// with gompi.Stop, which always calls MPI_Finalize, after every collio file
// is closed; or let collio initialise MPI (collio.World) and build gompi
// communicators with gompi.NewCommunicator, which needs nothing else — and
// then do not call gompi.Stop, since collio.Finalize finalises what collio
// initialised.
package gompiadapt

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	gompi "github.com/sbromberger/gompi"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
)

// minTagUB is the least MPI_TAG_UB the MPI standard guarantees. gompi
// v0.2.0 stores a pointer into its MaxTag instead of the value, so
// communicators made by ToGompi report this safe bound instead.
const minTagUB = 32767

func init() {
	if err := checkLayout(reflect.TypeFor[gompi.Communicator]()); err != nil {
		panic("gompiadapt: github.com/sbromberger/gompi changed and cannot be adapted safely: " + err.Error())
	}
}

// checkLayout verifies what the unsafe accesses rely on: the first field of
// gompi's Communicator, at offset 0, is its MPI_Comm, an Open MPI
// communicator pointer.
func checkLayout(t reflect.Type) error {
	if t.Kind() != reflect.Struct || t.NumField() == 0 {
		return fmt.Errorf("%v is not a struct with fields", t)
	}
	f := t.Field(0)
	switch {
	case f.Name != "comm":
		return fmt.Errorf("%v: first field is %q, expected comm", t, f.Name)
	case f.Offset != 0:
		return fmt.Errorf("%v: field comm at offset %d, expected 0", t, f.Offset)
	case f.Type.Kind() != reflect.Pointer:
		return fmt.Errorf("%v: field comm is a %v, expected a pointer (Open MPI's MPI_Comm)", t, f.Type.Kind())
	case f.Type.Size() != unsafe.Sizeof(unsafe.Pointer(nil)):
		return fmt.Errorf("%v: field comm has %d bytes, expected a pointer's %d", t, f.Type.Size(), unsafe.Sizeof(unsafe.Pointer(nil)))
	case !strings.Contains(f.Type.Elem().Name(), "ompi_communicator"):
		return fmt.Errorf("%v: field comm points to %q, expected Open MPI's struct ompi_communicator_t", t, f.Type.Elem().Name())
	}
	return nil
}

// commField is gompi's MPI_Comm inside c (layout checked by init).
func commField(c *gompi.Communicator) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Pointer(c))
}

// FromGompi returns the collio communicator for gompi's c: the same MPI
// communicator, not a copy (collio.Open duplicates it for its own traffic,
// as MPI_File_open does). It returns nil for a nil c and for a
// communicator this rank is not part of (MPI_COMM_NULL, which gompi's
// NewCommunicator gives ranks left out of the group).
//
// collio never frees a communicator it did not create, so c stays the
// caller's.
func FromGompi(c *gompi.Communicator) collio.Comm {
	if c == nil {
		return nil
	}
	p := *commField(c)
	if p == nil {
		return nil
	}
	mc := mpi.CommFromPointer(p)
	if mc.IsNull() {
		return nil
	}
	return mc
}

// ToGompi returns a gompi communicator for c, which must be backed by MPI
// (collio.World, collio.CommFromFint, FromGompi, or a Split or Dup of
// them; not an in-memory communicator). The result shares c's MPI
// communicator: it is valid only while c is, and must not be used after
// c is freed. Its MaxTag is the standard's guaranteed minimum, 32767.
func ToGompi(c collio.Comm) (*gompi.Communicator, error) {
	const op = "to_gompi"
	if c == nil {
		return nil, ioerr.New(ioerr.ErrArg, op, "communicator is nil")
	}
	mc, ok := c.(mpi.Comm)
	if !ok {
		return nil, ioerr.New(ioerr.ErrArg, op, "communicator of type %T is not backed by MPI", c)
	}
	if mc.Pointer() == nil || mc.IsNull() {
		return nil, ioerr.New(ioerr.ErrArg, op, "communicator is not a valid MPI communicator (null handle)")
	}
	if !mpi.Initialized() || mpi.Finalized() {
		return nil, ioerr.New(ioerr.ErrArg, op, "MPI is not initialised or already finalised")
	}
	g := &gompi.Communicator{MaxTag: minTagUB}
	*commField(g) = mc.Pointer()
	return g, nil
}
