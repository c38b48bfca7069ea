package agree

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// spinFor is how long AllgatherWithin polls without sleeping.
const spinFor = 500 * time.Microsecond

// AllgatherWithin is an Allgather that gives up after timeout (0 = wait
// forever): it starts a nonblocking Iallgather and polls it, so a rank whose
// peers never join (mismatched collective calls, a peer that failed before
// the call) returns an error instead of hanging. After a timeout the
// communicator must not be used again: the gather is still pending.
func AllgatherWithin(c comm.Comm, send, recv []byte, timeout time.Duration, what string) error {
	if timeout <= 0 {
		return c.Allgather(send, recv)
	}
	req, err := c.Iallgather(send, recv)
	if err != nil {
		return err
	}
	start := time.Now()
	deadline := start.Add(timeout)
	pause := 10 * time.Microsecond
	for {
		done, err := req.Test()
		if done {
			return err
		}
		now := time.Now()
		if now.After(deadline) {
			return &ioerr.Error{Class: ioerr.ErrTimeout, Op: what, Rank: c.Rank(),
				Msg: fmt.Sprintf("not every rank joined the collective call within %v: check that all ranks make the same collective calls on the same file in the same order", timeout)}
		}
		// Most collectives complete within microseconds: keep testing
		// without sleeping for a while (a sleep costs tens of microseconds
		// at least), then back off to at most a millisecond.
		if now.Sub(start) < spinFor {
			// Give the core away, not just the goroutine: with more
			// ranks than cores the peer this rank waits for may need
			// it (Open MPI's own polling does the same when
			// oversubscribed).
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}
