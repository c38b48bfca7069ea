package main

// #include "shim.h"
import "C"

import (
	"sync"
	"unsafe"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/ioserver"
)

// computes maps the MPI_Comm handles collio_split_io_servers returned to
// their sessions with the servers: opens on such a communicator go through
// the servers.
var computes sync.Map // unsafe.Pointer → *ioserver.Compute

// withServers returns the communicator to open a file on: c itself, or its
// compute communicator with the I/O server session.
func withServers(c mpi.Comm) comm.Comm {
	if v, ok := computes.Load(c.Pointer()); ok {
		return v.(*ioserver.Compute)
	}
	return c
}

//export collioGoSplitIOServers
func collioGoSplitIOServers(commp unsafe.Pointer, n C.int, info unsafe.Pointer, out *unsafe.Pointer) C.int {
	*out = nil
	c := mpi.CommFromPointer(commp)
	rank := c.Rank()
	res, err := ioserver.SplitHints(c, int(n), infoMap(C.MPI_Info(info)))
	if err != nil {
		return fail(withContext(ioerr.Wrap(err, "split_io_servers", "", rank), "split_io_servers", "", rank))
	}
	if res == nil {
		return C.MPI_SUCCESS // a server rank, stopped
	}
	cp, ok := res.(*ioserver.Compute)
	if !ok { // no servers asked for: the communicator itself
		return fail(withContext(errCode(C.MPI_ERR_ARG, "no I/O servers: collio_io_servers is 0"), "split_io_servers", "", rank))
	}
	mc, ok := cp.Comm.(mpi.Comm)
	if !ok {
		return fail(withContext(errCode(C.MPI_ERR_INTERN, "the compute communicator is not an MPI communicator"), "split_io_servers", "", rank))
	}
	computes.Store(mc.Pointer(), cp)
	*out = mc.Pointer()
	return C.MPI_SUCCESS
}

//export collioGoStopIOServers
func collioGoStopIOServers(commp unsafe.Pointer) C.int {
	v, ok := computes.Load(commp)
	if !ok {
		return fail(withContext(errCode(C.MPI_ERR_COMM, "the communicator is not a compute communicator of collio_split_io_servers"), "stop_io_servers", "", -1))
	}
	cp := v.(*ioserver.Compute)
	rank := cp.Rank()
	err := ioserver.Stop(cp)
	computes.Delete(commp)
	return fail(withContext(err, "stop_io_servers", "", rank))
}
