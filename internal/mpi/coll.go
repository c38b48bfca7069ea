package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_byte_type(void) { return MPI_BYTE; }
// static MPI_Datatype collio_int64_type(void) { return MPI_INT64_T; }
// static MPI_Op collio_op_sum(void) { return MPI_SUM; }
// static MPI_Op collio_op_max(void) { return MPI_MAX; }
// static MPI_Op collio_op_min(void) { return MPI_MIN; }
// // MPI_IN_PLACE is (void *)1 in Open MPI: it must never sit in a Go
// // pointer, where a stack copy takes it for an invalid pointer and the
// // runtime aborts ("invalid pointer found on stack"). So it is passed here.
// static int collio_allreduce_in_place(void *buf, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
// 	return MPI_Allreduce(MPI_IN_PLACE, buf, n, t, op, c);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/collio/collio/internal/comm"
)

// Blocking collectives over byte buffers (counts and displacements in
// bytes, MPI_BYTE on the wire). Arguments are checked against this rank's
// view before MPI is called, because a bad count makes MPI abort or write
// outside a buffer.

// Barrier is MPI_Barrier.
func (c Comm) Barrier() error {
	if err := c.usable("MPI_Barrier"); err != nil {
		return err
	}
	beforeWait()
	return check(C.MPI_Barrier(c.c), "MPI_Barrier")
}

// Bcast is MPI_Bcast of len(buf) bytes from root. len(buf) must be equal
// on every rank (MPI cannot check it for us reliably).
func (c Comm) Bcast(buf []byte, root int) error {
	size, err := c.SizeErr()
	if err != nil {
		return err
	}
	if err := checkRank(root, size, "root", "MPI_Bcast"); err != nil {
		return err
	}
	n, err := cCount(len(buf), "buffer length", "MPI_Bcast")
	if err != nil {
		return err
	}
	beforeWait()
	return check(C.MPI_Bcast(bufPtr(buf), n, C.collio_byte_type(), C.int(root), c.c), "MPI_Bcast")
}

// Allgather is MPI_Allgather: every rank's send (equal lengths) lands in
// recv in rank order.
func (c Comm) Allgather(send, recv []byte) error {
	n, err := c.gatherCount(send, recv, "MPI_Allgather")
	if err != nil {
		return err
	}
	beforeWait()
	return check(C.MPI_Allgather(bufPtr(send), n, C.collio_byte_type(),
		bufPtr(recv), n, C.collio_byte_type(), c.c), "MPI_Allgather")
}

// Allgatherv is MPI_Allgatherv: rank r's counts[r] bytes land at displs[r]
// of recv.
func (c Comm) Allgatherv(send, recv []byte, counts, displs []int) error {
	size, err := c.SizeErr()
	if err != nil {
		return err
	}
	rank, err := c.RankErr()
	if err != nil {
		return err
	}
	cc, cd, err := cCounts(counts, displs, size, len(recv), "", "MPI_Allgatherv")
	if err != nil {
		return err
	}
	if counts[rank] != len(send) {
		return fmt.Errorf("mpi: MPI_Allgatherv: counts[%d] is %d but this rank sends %d bytes", rank, counts[rank], len(send))
	}
	beforeWait()
	return check(C.MPI_Allgatherv(bufPtr(send), cc[rank], C.collio_byte_type(),
		bufPtr(recv), intPtr(cc), intPtr(cd), C.collio_byte_type(), c.c), "MPI_Allgatherv")
}

// Alltoall is MPI_Alltoall with n bytes per rank pair.
func (c Comm) Alltoall(send, recv []byte, n int) error {
	size, err := c.SizeErr()
	if err != nil {
		return err
	}
	cn, err := cCount(n, "block size", "MPI_Alltoall")
	if err != nil {
		return err
	}
	if len(send) != size*n || len(recv) != size*n {
		return fmt.Errorf("mpi: MPI_Alltoall: send is %d bytes and receive is %d bytes, want %d ranks × %d bytes each", len(send), len(recv), size, n)
	}
	beforeWait()
	return check(C.MPI_Alltoall(bufPtr(send), cn, C.collio_byte_type(),
		bufPtr(recv), cn, C.collio_byte_type(), c.c), "MPI_Alltoall")
}

// Alltoallv is MPI_Alltoallv: scounts[i] bytes at sdispls[i] go to rank i,
// rcounts[j] bytes from rank j land at rdispls[j].
func (c Comm) Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	size, err := c.SizeErr()
	if err != nil {
		return err
	}
	sc, sd, err := cCounts(scounts, sdispls, size, len(send), "s", "MPI_Alltoallv")
	if err != nil {
		return err
	}
	rc, rd, err := cCounts(rcounts, rdispls, size, len(recv), "r", "MPI_Alltoallv")
	if err != nil {
		return err
	}
	beforeWait()
	return check(C.MPI_Alltoallv(bufPtr(send), intPtr(sc), intPtr(sd), C.collio_byte_type(),
		bufPtr(recv), intPtr(rc), intPtr(rd), C.collio_byte_type(), c.c), "MPI_Alltoallv")
}

// AllreduceInt64 is MPI_Allreduce on MPI_INT64_T. in and out may alias:
// in is copied to out and reduced in place (MPI forbids aliased buffers).
func (c Comm) AllreduceInt64(in, out []int64, op comm.Op) error {
	if err := c.usable("MPI_Allreduce"); err != nil {
		return err
	}
	if len(in) != len(out) {
		return fmt.Errorf("mpi: MPI_Allreduce: input has %d elements, output %d", len(in), len(out))
	}
	n, err := cCount(len(out), "element count", "MPI_Allreduce")
	if err != nil {
		return err
	}
	var mop C.MPI_Op
	switch op {
	case comm.OpSum:
		mop = C.collio_op_sum()
	case comm.OpMax:
		mop = C.collio_op_max()
	case comm.OpMin:
		mop = C.collio_op_min()
	default:
		return fmt.Errorf("mpi: MPI_Allreduce: unknown reduction op %d", int(op))
	}
	copy(out, in)
	var p unsafe.Pointer
	if len(out) > 0 {
		p = unsafe.Pointer(&out[0])
	}
	beforeWait()
	return check(C.collio_allreduce_in_place(p, n, C.collio_int64_type(), mop, c.c), "MPI_Allreduce")
}
