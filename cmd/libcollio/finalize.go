package main

// #include "shim.h"
import "C"

import (
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/ioserver"
)

// collioGoFinalize waits for the copies of the E10 cache's deferred closes
// (e10_cache_deferred_close), which run in goroutines that would die with
// the process, and returns the MPI class of their errors (the message is
// the last error). MPI_Finalize (init_finalize.c) calls it before
// PMPI_Finalize. MPI itself is the program's: internal/mpi.Finalize must
// not be called here (its MPI_Finalize is init_finalize.c's).
//
//export collioGoFinalize
func collioGoFinalize() C.int {
	defer stopCPUProfile()
	// I/O servers the program did not stop are stopped: every compute
	// rank finalises too, and the server ranks then return.
	if err := ioserver.StopAll(); err != nil {
		computes.Clear()
		return fail(withContext(err, "stop_io_servers", "", worldRank()))
	}
	computes.Clear()
	err := cache.WaitAll()
	if err == nil {
		return C.MPI_SUCCESS
	}
	// Not ioerr.Wrap: it would keep only an inner *ioerr.Error's text and
	// drop where the data not copied stays.
	return fail(&ioerr.Error{Class: ioerr.ClassOf(err), Op: "deferred close", Rank: worldRank(), Err: err})
}
