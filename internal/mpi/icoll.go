package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_icoll_byte(void) { return MPI_BYTE; }
import "C"

import (
	"github.com/collio/collio/internal/comm"
)

// Iallgather is MPI_Iallgather; poll Test with a deadline to agree with
// peers that may be stuck elsewhere.
func (c Comm) Iallgather(send, recv []byte) (comm.Request, error) {
	return nilOnError(c.IAllgather(send, recv))
}

// IAllgather is Iallgather returning the concrete *Request.
func (c Comm) IAllgather(send, recv []byte) (*Request, error) {
	const call = "MPI_Iallgather"
	n, err := c.gatherCount(send, recv, call)
	if err != nil {
		return nil, err
	}
	r := newRequest(call, false, send, recv)
	r.sent = len(recv)
	if err := r.started(C.MPI_Iallgather(bufPtr(send), n, C.collio_icoll_byte(),
		bufPtr(recv), n, C.collio_icoll_byte(), c.c, &r.req)); err != nil {
		return nil, err
	}
	return r, nil
}
