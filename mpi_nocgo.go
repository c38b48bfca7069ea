//go:build !cgo

package collio

import (
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/ioerr"
)

// A build without cgo has no MPI binding (mpi.go): the entry points that
// need MPI say so, and everything else, Open with a Comm of the program's
// own included, works as usual.

func noMPI(op string) error {
	return ioerr.New(ioerr.ErrUnsupported, op, "collio was built without cgo (CGO_ENABLED=0), so it has no MPI; build it with cgo and Open MPI")
}

// Init reports that this build has no MPI.
func Init() error { return noMPI("init") }

// Finalize waits for the deferred closes of the E10 cache, as with MPI;
// there is no MPI to finalise.
func Finalize() error {
	if err := cache.WaitAll(); err != nil {
		return ioerr.Wrap(err, "finalize", "", -1)
	}
	return nil
}

// World reports that this build has no MPI.
func World() (Comm, error) { return nil, noMPI("comm_world") }

// CommFromFint reports that this build has no MPI.
func CommFromFint(f int32) (Comm, error) { return nil, noMPI("comm_f2c") }

// TypeFromMPI reports that this build has no MPI.
func TypeFromMPI(fint int32) (*Type, error) { return nil, noMPI("type_f2c") }
