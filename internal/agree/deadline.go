package agree

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// spinFor is how long a wait polls without sleeping. Waits of a
// collective call on its peers are short unless a peer is still
// computing; past spinFor a sleep of pollSleep between tests costs at
// most a few percent of the wait.
const (
	spinFor   = 5 * time.Millisecond
	pollSleep = 50 * time.Microsecond
)

// AllgatherWithin is an Allgather that gives up after timeout (0 = wait
// forever): it polls nonblocking messages (c's AllgatherFor when it has
// one, else an Iallgather), so a rank whose peers never join
// (mismatched collective calls, a peer that failed before the call)
// returns an error instead of hanging. After a timeout the communicator
// must not be used again: the gather is still pending.
func AllgatherWithin(c comm.Comm, send, recv []byte, timeout time.Duration, what string) error {
	if c.Size() == 1 && len(recv) == len(send) {
		copy(recv, send) // nobody to wait for
		return nil
	}
	if g, ok := c.(interface {
		AllgatherFor(send, recv []byte, d time.Duration) (bool, error)
	}); ok {
		// A gather of the communicator's own, with a deadline (adio's
		// for files whose ranks span nodes).
		done, err := g.AllgatherFor(send, recv, timeout)
		if done || err != nil {
			return err
		}
		return timeoutError(c, timeout, what)
	}
	req, err := c.Iallgather(send, recv)
	if err != nil {
		return err
	}
	return wait(c, req, timeout, what)
}

// wait waits for req until it completes or timeout (0: never) passes.
//
// An MPI request waits inside one call into C that tests it and yields
// the core between tests (mpi.Request.TestFor): as fast as a blocking MPI
// call, with a deadline; a cgo call per test from Go cost more. While the
// thread is in C, Go's scheduler runs this process's other goroutines
// (the E10 cache's background copies) on another thread.
//
// Other requests (the in-memory communicator's) are polled from Go:
// runtime.Gosched lets the process's other goroutines run, then a raw
// sched_yield gives the core away without leaving the goroutine's thread.
func wait(c comm.Comm, req comm.Request, timeout time.Duration, what string) error {
	if r, ok := req.(interface {
		TestFor(time.Duration) (bool, error)
	}); ok {
		// An MPI request: the whole wait in C (see mpi.Request.TestFor).
		done, err := r.TestFor(timeout)
		if done {
			return err
		}
		return timeoutError(c, timeout, what)
	}
	start := time.Now()
	for {
		done, err := req.Test()
		if done {
			return err
		}
		now := time.Now()
		if timeout > 0 && now.Sub(start) > timeout {
			return timeoutError(c, timeout, what)
		}
		if now.Sub(start) < spinFor {
			runtime.Gosched()
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		time.Sleep(pollSleep)
	}
}

// WaitWithin waits for a nonblocking collective of c (c.Iallgather, ...)
// as AllgatherWithin waits for its own: until it completes, or timeout
// (0: never) passes, which is an ErrTimeout naming what.
func WaitWithin(c comm.Comm, req comm.Request, timeout time.Duration, what string) error {
	return wait(c, req, timeout, what)
}

// Allgather is c.Allgather waited for by polling (see wait), with no
// deadline.
func Allgather(c comm.Comm, send, recv []byte) error {
	return AllgatherWithin(c, send, recv, 0, "allgather")
}

// timeoutError is the error of a collective that not every rank joined.
func timeoutError(c comm.Comm, timeout time.Duration, what string) error {
	return &ioerr.Error{Class: ioerr.ErrTimeout, Op: what, Rank: c.Rank(),
		Msg: fmt.Sprintf("not every rank joined the collective call within %v: check that all ranks make the same collective calls on the same file in the same order", timeout)}
}
