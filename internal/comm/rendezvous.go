package comm

import "sync"

// rendezvous runs the collectives of one group without N² messages. Every
// rank numbers its collective calls on a communicator; the calls with the
// same number meet in one collOp. Each rank deposits its arguments and
// buffers there, waits until all have (gathered), copies what it needs
// straight out of the others' buffers, and waits again until all have
// copied (released) before its buffers may be reused.
type rendezvous struct {
	mu   sync.Mutex
	ops  map[uint64]*collOp // collectives that some but not all ranks have reached
	free []*collOp          // finished collectives kept for reuse
}

// collOp is one collective call, shared by the ranks of a group.
type collOp struct {
	deps     []deposit // by rank; written before arriving, read-only after gathered
	arrived  int
	departed int
	finished int

	gathered chan struct{} // closed once every rank has deposited and check has run
	released chan struct{} // closed once every rank has copied its share

	checkErr    error // whole-call problem found by the last arriver; nobody copies then
	copyErr     error // first problem a rank found while copying (lowest rank wins)
	copyErrRank int

	sum    []int64       // Allreduce result
	splits []splitResult // Split/SplitNode/Dup result by old rank
}

// deposit is one rank's contribution to a collective. Fields a kind does
// not use stay zero.
type deposit struct {
	kind   collKind
	err    error // this rank's own argument problem
	root   int
	n      int // Alltoall block size
	send   []byte
	counts []int // Alltoallv send counts
	displs []int // Alltoallv send displacements
	in     []int64
	op     Op
	color  int
	key    int
}

const maxFreeOps = 4

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// arrive deposits rank's d in collective seq. The last rank to arrive runs
// the whole-call check (and any single-rank computation such as a
// reduction) and then opens the gate.
func (g *group) arrive(seq uint64, rank int, d deposit) *collOp {
	rv := &g.coll
	n := g.size()
	rv.mu.Lock()
	op := rv.ops[seq]
	if op == nil {
		op = rv.take(n)
		rv.ops[seq] = op
	}
	op.deps[rank] = d
	op.arrived++
	last := op.arrived == n
	if last {
		delete(rv.ops, seq) // every rank holds op now; nobody looks it up again
	}
	rv.mu.Unlock()
	if last {
		op.checkErr = checkCollective(g, op)
		close(op.gathered)
	}
	return op
}

func (rv *rendezvous) take(n int) *collOp {
	var op *collOp
	if k := len(rv.free); k > 0 {
		op, rv.free = rv.free[k-1], rv.free[:k-1]
	} else {
		op = &collOp{deps: make([]deposit, n)}
	}
	op.gathered = make(chan struct{})
	op.released = make(chan struct{})
	return op
}

// depart records that rank has copied its share (err: what went wrong).
func (g *group) depart(op *collOp, rank int, err error) {
	rv := &g.coll
	rv.mu.Lock()
	if err != nil && (op.copyErr == nil || rank < op.copyErrRank) {
		op.copyErr, op.copyErrRank = err, rank
	}
	op.departed++
	if op.departed == g.size() {
		close(op.released)
	}
	rv.mu.Unlock()
}

// finish records that rank no longer reads op; the last one recycles it.
func (g *group) finish(op *collOp) {
	rv := &g.coll
	rv.mu.Lock()
	defer rv.mu.Unlock()
	op.finished++
	if op.finished < g.size() || len(rv.free) >= maxFreeOps {
		return
	}
	clear(op.deps) // drop references to user buffers
	op.arrived, op.departed, op.finished = 0, 0, 0
	op.checkErr, op.copyErr, op.copyErrRank = nil, nil, 0
	op.sum, op.splits = nil, nil
	rv.free = append(rv.free, op)
}

// collCall is one rank's progress through a collective. Blocking
// collectives drive it to the end at once; Iallgather's request advances
// it from Wait and Test.
type collCall struct {
	c      *memComm
	op     *collOp
	ci     callInfo
	share  func(op *collOp) error // this rank's data movement
	stage  collStage
	err    error
	copied int // bytes received, for Request.Count
}

type collStage uint8

const (
	stageGathering collStage = iota // waiting for every rank to deposit
	stageReleasing                  // copied; waiting for every rank to copy
	stageDone
)

// advance moves the call as far as it can go; with block it waits until
// the end (or an abort). It reports whether the call is done.
func (cc *collCall) advance(block bool) bool {
	c, op := cc.c, cc.op
	w := c.g.world
	me := c.g.members[c.rank]
	if cc.stage == stageGathering {
		if !cc.reached(block, op.gathered, w, me) {
			return false
		}
		if cc.stage == stageDone {
			return true
		}
		if op.checkErr != nil {
			cc.err = op.checkErr
			c.g.depart(op, c.rank, nil)
			c.g.finish(op)
			cc.stage = stageDone
			return true
		}
		c.g.depart(op, c.rank, cc.share(op))
		cc.stage = stageReleasing
	}
	if cc.stage == stageReleasing {
		if !cc.reached(block, op.released, w, me) {
			return false
		}
		if cc.stage == stageDone {
			return true
		}
		cc.err = op.copyErr
		c.g.finish(op)
		cc.stage = stageDone
	}
	return true
}

// reached reports whether gate is open; an abort ends the call instead.
func (cc *collCall) reached(block bool, gate chan struct{}, w *World, me int) bool {
	var err error
	if block {
		err = w.wait(me, cc.ci, gate)
	} else if !isClosed(gate) {
		err = w.aborted()
		if err == nil {
			return false
		}
	}
	if err != nil {
		cc.err, cc.stage = err, stageDone
	}
	return true
}
