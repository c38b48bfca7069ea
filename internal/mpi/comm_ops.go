package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static int collio_undefined(void) { return MPI_UNDEFINED; }
// static MPI_Comm collio_null_comm(void) { return MPI_COMM_NULL; }
// static int collio_split_shared(MPI_Comm c, int key, MPI_Comm *out) {
//   return MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, out);
// }
// /* Rank and size in one cgo call (each costs about as much as the MPI
//    call itself): -1 if MPI is not running, -2 for MPI_COMM_NULL, else
//    the MPI return code. */
// static int collio_comm_rank_size(MPI_Comm c, int *rank, int *size) {
//   int flag;
//   MPI_Initialized(&flag);
//   if (!flag) return -1;
//   MPI_Finalized(&flag);
//   if (flag) return -1;
//   if (c == MPI_COMM_NULL) return -2;
//   int rc = MPI_Comm_size(c, size);
//   if (rc != MPI_SUCCESS) return rc;
//   return MPI_Comm_rank(c, rank);
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// created holds the communicators collio made (Dup, Split, SplitShared).
// Only those may be freed through Free, which protects the application's
// communicators and catches a double free, which would crash Open MPI.
var created struct {
	sync.Mutex
	set map[C.MPI_Comm]bool
}

func remember(c Comm) {
	created.Lock()
	defer created.Unlock()
	if created.set == nil {
		created.set = make(map[C.MPI_Comm]bool)
	}
	created.set[c.c] = true
}

// forget removes c from the set and reports whether it was there.
func forget(c Comm) bool {
	created.Lock()
	defer created.Unlock()
	if !created.set[c.c] {
		return false
	}
	delete(created.set, c.c)
	return true
}

// Created counts the communicators collio made and has not freed: a
// check for leaks, and for the duplicates package commpool keeps.
func Created() int {
	created.Lock()
	defer created.Unlock()
	return len(created.set)
}

// nullComm is MPI_COMM_NULL, what failed constructors return.
func nullComm() Comm { return Comm{C.collio_null_comm()} }

// errNotRunning names the usual reason a call cannot reach MPI at all.
var errNotRunning = errors.New("mpi: MPI is not initialised or already finalised")

// usable checks, before any MPI call, that MPI is running and that c is a
// real communicator: MPI aborts the job (or dereferences nil) otherwise.
func (c Comm) usable(call string) error {
	if !Initialized() || Finalized() {
		return fmt.Errorf("%s: %w", call, errNotRunning)
	}
	if c.c == nil {
		return fmt.Errorf("mpi: %s on a zero Comm (not obtained from World, Dup, Split or CommFromFint)", call)
	}
	if c.IsNull() {
		return fmt.Errorf("mpi: %s on MPI_COMM_NULL", call)
	}
	return nil
}

// rankSize is MPI_Comm_rank and MPI_Comm_size with the checks of usable,
// in one cgo call.
func (c Comm) rankSize(call string) (rank, size int, err error) {
	if c.c == nil {
		return -1, 0, c.usable(call)
	}
	var r, n C.int
	switch rc := C.collio_comm_rank_size(c.c, &r, &n); rc {
	case 0:
		return int(r), int(n), nil
	case -1, -2:
		return -1, 0, c.usable(call)
	default:
		return -1, 0, check(rc, call)
	}
}

// RankErr is MPI_Comm_rank with its error.
func (c Comm) RankErr() (int, error) {
	r, _, err := c.rankSize("MPI_Comm_rank")
	return r, err
}

// SizeErr is MPI_Comm_size with its error.
func (c Comm) SizeErr() (int, error) {
	_, n, err := c.rankSize("MPI_Comm_size")
	return n, err
}

// Rank is this process's rank in c, or -1 if c is not usable.
func (c Comm) Rank() int {
	r, _ := c.RankErr()
	return r
}

// Size is the number of ranks in c, or 0 if c is not usable.
func (c Comm) Size() int {
	n, _ := c.SizeErr()
	return n
}

// adopt registers a communicator collio just created and makes it return
// error codes. A null result (MPI_UNDEFINED color) is passed through.
func adopt(nc Comm, call string) (Comm, error) {
	if nc.IsNull() {
		return nc, nil
	}
	if err := setErrorsReturn(nc); err != nil {
		C.MPI_Comm_free(&nc.c)
		return nullComm(), fmt.Errorf("%s: %w", call, err)
	}
	remember(nc)
	return nc, nil
}

// DupComm is MPI_Comm_dup. The new communicator reports errors as return
// codes (MPI_ERRORS_RETURN) and must be released with Free.
func (c Comm) DupComm() (Comm, error) {
	if err := c.usable("MPI_Comm_dup"); err != nil {
		return nullComm(), err
	}
	var nc Comm
	if err := check(C.MPI_Comm_dup(c.c, &nc.c), "MPI_Comm_dup"); err != nil {
		return nullComm(), err
	}
	return adopt(nc, "MPI_Comm_dup")
}

// SplitComm is MPI_Comm_split. A negative color means MPI_UNDEFINED: the
// result is MPI_COMM_NULL (check IsNull). Non-null results report errors as
// return codes and must be released with Free.
func (c Comm) SplitComm(color, key int) (Comm, error) {
	if err := c.usable("MPI_Comm_split"); err != nil {
		return nullComm(), err
	}
	if color > math.MaxInt32 || key > math.MaxInt32 || key < math.MinInt32 {
		return nullComm(), fmt.Errorf("mpi: MPI_Comm_split: color %d or key %d does not fit in a C int", color, key)
	}
	cc := C.int(color)
	if color < 0 {
		cc = C.collio_undefined()
	}
	var nc Comm
	if err := check(C.MPI_Comm_split(c.c, cc, C.int(key), &nc.c), "MPI_Comm_split"); err != nil {
		return nullComm(), err
	}
	return adopt(nc, "MPI_Comm_split")
}

// SplitShared is MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks of c
// that share this rank's node, in the order of their rank in c.
func (c Comm) SplitShared() (Comm, error) {
	r, err := c.RankErr()
	if err != nil {
		return nullComm(), err
	}
	var nc Comm
	if err := check(C.collio_split_shared(c.c, C.int(r), &nc.c), "MPI_Comm_split_type"); err != nil {
		return nullComm(), err
	}
	return adopt(nc, "MPI_Comm_split_type")
}

// Free is MPI_Comm_free for a communicator collio created. Freeing WORLD,
// an application's communicator or an already freed one is an error.
func (c Comm) Free() error {
	if err := c.usable("MPI_Comm_free"); err != nil {
		return err
	}
	if !forget(c) {
		return fmt.Errorf("mpi: MPI_Comm_free: communicator was not created by collio's Dup/Split or was already freed")
	}
	h := c.c
	return check(C.MPI_Comm_free(&h), "MPI_Comm_free")
}

// Fint is MPI_Comm_c2f: the Fortran integer handle of c, the portable way
// to pass communicators between languages and packages. WORLD is 0.
func (c Comm) Fint() int32 {
	if c.c == nil {
		return int32(C.MPI_Comm_c2f(nullComm().c))
	}
	return int32(C.MPI_Comm_c2f(c.c))
}

// CommFromFint is MPI_Comm_f2c. An integer that names no communicator gives
// MPI_COMM_NULL (check IsNull).
func CommFromFint(f int32) Comm {
	if !Initialized() || Finalized() {
		return nullComm()
	}
	h := C.MPI_Comm_f2c(C.MPI_Fint(f))
	if h == nil {
		return nullComm()
	}
	return Comm{h}
}
