package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// /* A counter is one long long held by rank 0 in an MPI window and changed
//    with atomic MPI_Fetch_and_op under a shared passive-target lock. */
// static int collio_counter_create(MPI_Comm comm, long long init, MPI_Win *win) {
//   long long *mem = NULL;
//   int rank, rc;
//   rc = MPI_Comm_rank(comm, &rank);
//   if (rc != MPI_SUCCESS) return rc;
//   rc = MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(long long) : 0, (int)sizeof(long long),
//                         MPI_INFO_NULL, comm, &mem, win);
//   if (rc != MPI_SUCCESS) return rc;
//   MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
//   if (rank == 0) *mem = init;
//   /* Nobody changes the value before rank 0 stored init. */
//   return MPI_Barrier(comm);
// }
// static int collio_counter_op(MPI_Win win, long long in, long long *out, int set) {
//   long long tmp;
//   MPI_Op op = set ? MPI_REPLACE : (in == 0 ? MPI_NO_OP : MPI_SUM);
//   int rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
//   if (rc != MPI_SUCCESS) return rc;
//   rc = MPI_Fetch_and_op(&in, out != NULL ? out : &tmp, MPI_LONG_LONG, 0, 0, op, win);
//   int rc2 = MPI_Win_unlock(0, win);
//   return rc != MPI_SUCCESS ? rc : rc2;
// }
// static int collio_counter_free(MPI_Win *win) { return MPI_Win_free(win); }
import "C"

import (
	"errors"
	"sync/atomic"

	"github.com/collio/collio/internal/comm"
)

// Counter is a comm.Counter in an MPI window: rank 0 holds the value, and
// every rank changes it with one MPI_Fetch_and_op, which needs no action
// from rank 0 (passive target).
type Counter struct {
	win   C.MPI_Win
	freed atomic.Bool
}

// NewCounter makes a counter holding init over c's ranks (collective:
// MPI_Win_allocate).
func (c Comm) NewCounter(init int64) (comm.Counter, error) {
	if err := c.usable("MPI_Win_allocate"); err != nil {
		return nil, err
	}
	k := &Counter{}
	if err := check(C.collio_counter_create(c.c, C.longlong(init), &k.win), "MPI_Win_allocate"); err != nil {
		return nil, err
	}
	return k, nil
}

// Add adds delta and returns the value before.
func (k *Counter) Add(delta int64) (int64, error) {
	if k.freed.Load() {
		return 0, errFreedCounter
	}
	var old C.longlong
	err := check(C.collio_counter_op(k.win, C.longlong(delta), &old, 0), "MPI_Fetch_and_op")
	return int64(old), err
}

// Set stores v.
func (k *Counter) Set(v int64) error {
	if k.freed.Load() {
		return errFreedCounter
	}
	return check(C.collio_counter_op(k.win, C.longlong(v), nil, 1), "MPI_Fetch_and_op")
}

// Free is MPI_Win_free (collective).
func (k *Counter) Free() error {
	if k.freed.Swap(true) {
		return errFreedCounter
	}
	return check(C.collio_counter_free(&k.win), "MPI_Win_free")
}

var errFreedCounter = errors.New("mpi: the counter has been freed")

var _ comm.CounterMaker = Comm{}
