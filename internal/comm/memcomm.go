package comm

import (
	"fmt"
	"sync/atomic"

	"github.com/collio/collio/internal/ioerr"
)

// memComm is one rank's handle on an in-memory communicator.
type memComm struct {
	g    *group
	rank int
	seq  uint64 // number of the next collective; collectives come from one goroutine per rank
	// nextCounter numbers this rank's NewCounter calls (see counters).
	nextCounter uint64
	freed       atomic.Bool
}

func (c *memComm) Rank() int { return c.rank }
func (c *memComm) Size() int { return c.g.size() }

// worldRank is the calling rank's rank in the world, for blocked reports.
func (c *memComm) worldRank() int { return c.g.members[c.rank] }

// usable is the check every call makes first.
func (c *memComm) usable(op string) error {
	if c.freed.Load() {
		return argError(op, c.rank, "communicator %d has been freed", c.g.id)
	}
	return c.g.world.aborted()
}

// Free releases a communicator made by Split, SplitNode or Dup. Requests
// already started on it still complete.
func (c *memComm) Free() error {
	if c.g == c.g.world.world {
		return argError("free", c.rank, "the world communicator cannot be freed")
	}
	if c.freed.Swap(true) {
		return argError("free", c.rank, "communicator %d is already freed", c.g.id)
	}
	return nil
}

// start enters the next collective with this rank's deposit.
func (c *memComm) start(name string, d deposit, share func(*collOp) error) (*collCall, error) {
	if err := c.usable(opName(d.kind)); err != nil {
		return nil, err
	}
	seq := c.seq
	c.seq++
	cc := &collCall{
		c:     c,
		ci:    callInfo{name: name, comm: c.g.id, seq: seq},
		share: share,
	}
	cc.op = c.g.arrive(seq, c.rank, d)
	return cc, nil
}

// collective runs a blocking collective to the end.
func (c *memComm) collective(name string, d deposit, share func(*collOp) error) error {
	cc, err := c.start(name, d, share)
	if err != nil {
		return err
	}
	cc.advance(true)
	return cc.err
}

func argError(op string, rank int, format string, args ...any) error {
	return &ioerr.Error{Class: ioerr.ErrArg, Op: op, Rank: rank, Msg: fmt.Sprintf(format, args...)}
}

func notSameError(op string, format string, args ...any) error {
	return &ioerr.Error{Class: ioerr.ErrNotSame, Op: op, Rank: -1, Msg: fmt.Sprintf(format, args...)}
}

var (
	_ Comm = (*memComm)(nil)
	_ Comm = badComm{}
)
