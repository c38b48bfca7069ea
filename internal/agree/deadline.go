package agree

import (
	"fmt"
	"time"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

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
	deadline := time.Now().Add(timeout)
	pause := time.Microsecond
	for {
		done, err := req.Test()
		if done {
			return err
		}
		if time.Now().After(deadline) {
			return &ioerr.Error{Class: ioerr.ErrTimeout, Op: what, Rank: c.Rank(),
				Msg: fmt.Sprintf("not every rank joined the collective call within %v: check that all ranks make the same collective calls on the same file in the same order", timeout)}
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}
