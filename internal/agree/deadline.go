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
// forever): it starts a nonblocking Iallgather and polls it, so a rank whose
// peers never join (mismatched collective calls, a peer that failed before
// the call) returns an error instead of hanging. After a timeout the
// communicator must not be used again: the gather is still pending.
func AllgatherWithin(c comm.Comm, send, recv []byte, timeout time.Duration, what string) error {
	if c.Size() == 1 && len(recv) == len(send) {
		copy(recv, send) // nobody to wait for
		return nil
	}
	req, err := c.Iallgather(send, recv)
	if err != nil {
		return err
	}
	return wait(c, req, timeout, what)
}

// wait polls req until it completes or timeout (0: never) passes.
//
// Each test is a short call into MPI, and between tests the thread gives
// its core away with a raw sched_yield. A blocking MPI call that spins
// inside C for longer than a scheduler tick makes Go's sysmon hand the
// rank's processor to another thread, which wakes up for nothing: with
// more ranks than cores that costs the peers this rank waits for their
// core time (an 8-byte Allgather at np 4 on 2 cores took 45-70 µs as one
// blocking call, 30-40 µs polled this way; Open MPI's own polling also
// yields when oversubscribed). The raw call keeps the goroutine on its
// thread; runtime.Gosched first lets this process's other goroutines (the
// E10 cache's background copies, file I/O overlapped with an exchange)
// run, which a raw loop alone would starve with GOMAXPROCS 1.
func wait(c comm.Comm, req comm.Request, timeout time.Duration, what string) error {
	start := time.Now()
	for {
		done, err := req.Test()
		if done {
			return err
		}
		now := time.Now()
		if timeout > 0 && now.Sub(start) > timeout {
			return &ioerr.Error{Class: ioerr.ErrTimeout, Op: what, Rank: c.Rank(),
				Msg: fmt.Sprintf("not every rank joined the collective call within %v: check that all ranks make the same collective calls on the same file in the same order", timeout)}
		}
		if now.Sub(start) < spinFor {
			runtime.Gosched()
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		time.Sleep(pollSleep)
	}
}

// Allgather is c.Allgather waited for by polling (see wait), with no
// deadline.
func Allgather(c comm.Comm, send, recv []byte) error {
	return AllgatherWithin(c, send, recv, 0, "allgather")
}
