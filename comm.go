package collio

import (
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Comm is a communicator: the ranks that open a file together. Use World()
// for MPI_COMM_WORLD, CommFromFint for a communicator made elsewhere (C,
// Fortran, another Go MPI binding), or the gompiadapt package for
// github.com/sbromberger/gompi communicators.
type Comm = comm.Comm

// WaitClosed waits until this process's deferred closes of path
// (e10_cache_deferred_close) have copied their caches to the file, and
// returns their errors. It is not collective; the next Open of path and
// Finalize wait the same way.
func WaitClosed(path string) error {
	if err := cache.WaitPath(path); err != nil {
		return ioerr.Wrap(err, "close", path, -1)
	}
	return nil
}
