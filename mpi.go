//go:build cgo

package collio

import (
	"errors"

	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/ioserver"
)

// Init initialises MPI with MPI_THREAD_MULTIPLE unless the program (or
// another library) already did; it is called by World and CommFromFint, so
// most programs need not call it. Call runtime.LockOSThread in an init
// function of package main: MPI expects the thread that initialised it to
// make the main thread's calls.
func Init() error {
	if mpi.Initialized() {
		return nil
	}
	_, err := mpi.Init()
	if err != nil {
		return ioerr.Wrap(err, "init", "", -1)
	}
	return nil
}

// Finalize finalises MPI if collio initialised it, and does nothing
// otherwise: MPI that the program initialised is the program's to finalise.
func Finalize() error {
	// I/O servers still running are stopped (collective on their compute
	// ranks, which all finalise), and deferred closes of the E10 cache
	// finish their copies.
	serr := ioserver.StopAll()
	cerr := errors.Join(serr, cache.WaitAll())
	if err := mpi.Finalize(); err != nil {
		return ioerr.Wrap(err, "finalize", "", -1)
	}
	if cerr != nil {
		return ioerr.Wrap(cerr, "finalize", "", -1)
	}
	return nil
}

// World returns MPI_COMM_WORLD, initialising MPI if needed.
func World() (Comm, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	return mpi.World(), nil
}

// CommFromFint returns the communicator whose Fortran handle is f
// (MPI_Comm_f2c): the portable way to pass a communicator between
// languages and Go packages. MPI_COMM_WORLD's handle is 0.
func CommFromFint(f int32) (Comm, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	c := mpi.CommFromFint(f)
	if c.IsNull() {
		return nil, ioerr.New(ioerr.ErrArg, "comm_f2c", "Fortran handle %d is not a communicator", f)
	}
	return c, nil
}

// TypeFromMPI decodes an MPI datatype built elsewhere (for example in C)
// into a Type, given its Fortran handle (MPI_Type_c2f). The result has the
// same typemap, lower bound and extent, in compact form.
func TypeFromMPI(fint int32) (*Type, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	t := mpi.DatatypeFromFint(fint)
	if t.IsNull() {
		return nil, ioerr.New(ioerr.ErrType, "type_f2c", "Fortran handle %d is not a datatype", fint)
	}
	return t.Layout()
}
