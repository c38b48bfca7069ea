package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_p2p_byte(void) { return MPI_BYTE; }
// static int collio_any_source(void) { return MPI_ANY_SOURCE; }
// static int collio_tag_ub(void) {
//   int *v = NULL, flag = 0;
//   if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) != MPI_SUCCESS || !flag || v == NULL)
//     return 32767; // the least upper bound the standard guarantees
//   return *v;
// }
import "C"

import (
	"fmt"
	"sync/atomic"

	"github.com/collio/collio/internal/comm"
)

// tagUB caches MPI_TAG_UB (0 until first asked).
var tagUB atomic.Int64

func checkTag(tag int, call string) error {
	ub := tagUB.Load()
	if ub == 0 {
		ub = int64(C.collio_tag_ub())
		tagUB.Store(ub)
	}
	if tag < 0 || int64(tag) > ub {
		return fmt.Errorf("mpi: %s: tag %d is outside 0..%d (MPI_TAG_UB)", call, tag, ub)
	}
	return nil
}

// p2pArgs checks a point-to-point call's peer, tag and length before MPI
// sees them. anyOK allows comm.AnySource as the peer.
func (c Comm) p2pArgs(call string, buf []byte, peer, tag int, anyOK bool) (C.int, C.int, error) {
	size, err := c.SizeErr()
	if err != nil {
		return 0, 0, err
	}
	cpeer := C.int(peer)
	if anyOK && peer == comm.AnySource {
		cpeer = C.collio_any_source()
	} else if err := checkRank(peer, size, "peer", call); err != nil {
		return 0, 0, err
	}
	if err := checkTag(tag, call); err != nil {
		return 0, 0, err
	}
	n, err := cCount(len(buf), "buffer length", call)
	return cpeer, n, err
}

// Isend is MPI_Isend of buf to dest. buf must not be modified until the
// request completes.
func (c Comm) Isend(buf []byte, dest, tag int) (comm.Request, error) {
	return nilOnError(c.ISend(buf, dest, tag))
}

// Issend is MPI_Issend: it completes once the matching receive started.
func (c Comm) Issend(buf []byte, dest, tag int) (comm.Request, error) {
	return nilOnError(c.ISsend(buf, dest, tag))
}

// Irecv is MPI_Irecv of at most len(buf) bytes; src may be comm.AnySource.
// A longer message makes Wait/Test return comm.ErrTruncate, except in one
// Open MPI 4.1.4 case (checked in C): a message a rank sends to itself
// after posting the receive is silently cut to len(buf).
func (c Comm) Irecv(buf []byte, src, tag int) (comm.Request, error) {
	return nilOnError(c.IRecv(buf, src, tag))
}

// ISend is Isend returning the concrete *Request (for Waitall, Source).
func (c Comm) ISend(buf []byte, dest, tag int) (*Request, error) {
	const call = "MPI_Isend"
	d, n, err := c.p2pArgs(call, buf, dest, tag, false)
	if err != nil {
		return nil, err
	}
	r := newRequest(call, false, buf)
	r.sent = len(buf)
	if err := r.started(C.MPI_Isend(bufPtr(buf), n, C.collio_p2p_byte(), d, C.int(tag), c.c, &r.req)); err != nil {
		return nil, err
	}
	return r, nil
}

// ISsend is Issend returning the concrete *Request.
func (c Comm) ISsend(buf []byte, dest, tag int) (*Request, error) {
	const call = "MPI_Issend"
	d, n, err := c.p2pArgs(call, buf, dest, tag, false)
	if err != nil {
		return nil, err
	}
	r := newRequest(call, false, buf)
	r.sent = len(buf)
	if err := r.started(C.MPI_Issend(bufPtr(buf), n, C.collio_p2p_byte(), d, C.int(tag), c.c, &r.req)); err != nil {
		return nil, err
	}
	return r, nil
}

// IRecv is Irecv returning the concrete *Request.
func (c Comm) IRecv(buf []byte, src, tag int) (*Request, error) {
	const call = "MPI_Irecv"
	s, n, err := c.p2pArgs(call, buf, src, tag, true)
	if err != nil {
		return nil, err
	}
	r := newRequest(call, true, buf)
	if err := r.started(C.MPI_Irecv(bufPtr(buf), n, C.collio_p2p_byte(), s, C.int(tag), c.c, &r.req)); err != nil {
		return nil, err
	}
	return r, nil
}

// nilOnError keeps a failed start from returning a non-nil interface
// holding a nil *Request.
func nilOnError(r *Request, err error) (comm.Request, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}
