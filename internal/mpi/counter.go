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
	"os"
	"sync"
	"sync/atomic"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/sockcounter"
)

// Counter is a comm.Counter in an MPI window: rank 0 holds the value, and
// every rank changes it with one MPI_Fetch_and_op, which needs no action
// from rank 0 (passive target).
type Counter struct {
	win   C.MPI_Win
	freed atomic.Bool
}

// NewCounter makes a counter holding init over c's ranks (collective).
// When all of c's ranks share one node it is an MPI window, the cheapest
// there (shared memory); otherwise rank 0 serves it over TCP
// (sockcounter): across nodes, Open MPI 4.1 has one-sided communication
// only over RDMA, and MPI_Win_allocate fails over TCP.
// COLLIO_SHARED_FP_SERVER=1 serves it over TCP on one node too.
func (c Comm) NewCounter(init int64) (comm.Counter, error) {
	if err := c.usable("MPI_Win_allocate"); err != nil {
		return nil, err
	}
	window, err := c.counterInWindow()
	if err != nil {
		return nil, err
	}
	if !window {
		return sockcounter.New(c, init)
	}
	k := &Counter{}
	if err := check(C.collio_counter_create(c.c, C.longlong(init), &k.win), "MPI_Win_allocate"); err != nil {
		return nil, err
	}
	return k, nil
}

// counterInWindow reports whether c's counter goes in an MPI window: all
// of c's ranks share one node and none asked for the server. Every rank
// gets the same answer (one Allreduce), so all make the same kind.
func (c Comm) counterInWindow() (bool, error) {
	nodeSize := int64(-1) // this rank could not tell
	nc, err := c.SplitShared()
	if err == nil {
		n := nc.Size()
		if err = nc.Free(); err == nil {
			nodeSize = int64(n)
		}
	}
	if nodeSize > 0 && (counterServerForced.Load() || counterServerEnv()) {
		nodeSize = 0
	}
	least := []int64{0}
	if aerr := c.AllreduceInt64([]int64{nodeSize}, least, comm.OpMin); aerr != nil {
		return false, aerr
	}
	switch {
	case err != nil:
		return false, err
	case least[0] < 0:
		return false, errors.New("mpi: NewCounter: another rank could not split its communicator by node")
	}
	return least[0] == int64(c.Size()), nil
}

// counterServerEnv is COLLIO_SHARED_FP_SERVER=1, read once. A value not
// accepted keeps the default, off; adio.Open reports it.
var counterServerEnv = sync.OnceValue(func() bool {
	on, _ := envvar.Switch(envvar.SharedFPServer, os.Getenv(envvar.SharedFPServer))
	return on
})

var counterServerForced atomic.Bool

// ForceCounterServer makes NewCounter serve counters over TCP on one node
// too, as COLLIO_SHARED_FP_SERVER=1 does (for tests, which cannot set the
// variable before its one reading). It returns the setting before.
func ForceCounterServer(on bool) (was bool) {
	return counterServerForced.Swap(on)
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
