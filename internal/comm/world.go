package comm

import (
	"errors"
	"sync"
	"sync/atomic"
)

// ErrAborted is wrapped by every error a call returns once its in-memory
// world has been aborted.
var ErrAborted = errors.New("comm: world aborted")

// World is an in-memory MPI world: n ranks that are goroutines of one
// process, grouped into virtual nodes of nodeSize consecutive ranks.
type World struct {
	n        int
	nodeSize int

	world *group     // the group of every rank (MPI_COMM_WORLD)
	comms []*memComm // each rank's handle on world, shared so its collective sequence is too

	abortOnce sync.Once
	abortCh   chan struct{} // closed by Abort; every blocking wait selects on it
	abortErr  error         // set before abortCh is closed

	nextGroupID atomic.Uint64
	calls       []rankCalls // what each world rank is blocked in, for timeout reports
}

// NewWorld makes an in-memory world of n ranks; ranks [k*nodeSize,
// (k+1)*nodeSize) form virtual node k (nodeSize <= 0: one node).
// n < 1 is treated as 1 so that the world is always usable.
func NewWorld(n, nodeSize int) *World {
	if n < 1 {
		n = 1
	}
	if nodeSize <= 0 || nodeSize > n {
		nodeSize = n
	}
	w := &World{
		n:        n,
		nodeSize: nodeSize,
		abortCh:  make(chan struct{}),
		calls:    make([]rankCalls, n),
	}
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	w.world = w.newGroup(members)
	w.comms = make([]*memComm, n)
	for r := range w.comms {
		w.comms[r] = &memComm{g: w.world, rank: r}
	}
	return w
}

// Size is the number of ranks of the world.
func (w *World) Size() int { return w.n }

// Comm returns the world communicator as seen by rank. Every call for the
// same rank returns the same handle. An out-of-range rank gives a
// communicator whose every call fails.
func (w *World) Comm(rank int) Comm {
	if rank < 0 || rank >= w.n {
		return badComm{rank: rank, size: w.n}
	}
	return w.comms[rank]
}

// Abort poisons the world: every blocked or later call on any communicator
// of this world returns an error wrapping ErrAborted and err. Only the
// first Abort's err is kept.
func (w *World) Abort(err error) {
	w.abortOnce.Do(func() {
		w.abortErr = &abortError{cause: err}
		close(w.abortCh)
	})
}

// aborted returns the abort error, or nil while the world is healthy.
func (w *World) aborted() error {
	select {
	case <-w.abortCh:
		return w.abortErr
	default:
		return nil
	}
}

// nodeOf is the virtual node of a world rank.
func (w *World) nodeOf(worldRank int) int { return worldRank / w.nodeSize }

// NodeOf reports the virtual node of the calling rank for in-memory
// communicators (also through wrappers such as Counting); ok is false for
// other implementations.
func NodeOf(c Comm) (node int, ok bool) {
	for {
		switch v := c.(type) {
		case *memComm:
			return v.g.world.nodeOf(v.g.members[v.rank]), true
		case interface{ Unwrap() Comm }:
			c = v.Unwrap()
		default:
			return 0, false
		}
	}
}

// abortError wraps both ErrAborted and the cause given to Abort.
type abortError struct{ cause error }

func (e *abortError) Error() string {
	if e.cause == nil {
		return ErrAborted.Error()
	}
	return ErrAborted.Error() + ": " + e.cause.Error()
}

func (e *abortError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrAborted}
	}
	return []error{ErrAborted, e.cause}
}
