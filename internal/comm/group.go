package comm

import "sync"

// group is the state shared by every rank of one in-memory communicator:
// its members, one mailbox per rank for point-to-point matching, and the
// collective rendezvous. Split, SplitNode and Dup make new groups, so their
// messages and collectives never match those of the parent.
type group struct {
	world   *World
	id      uint64
	members []int     // world rank of each group rank
	boxes   []mailbox // boxes[r] holds what rank r has yet to match
	coll    rendezvous
	// counters are the group's shared counters (NewCounter).
	counters counters
}

func (w *World) newGroup(members []int) *group {
	return &group{
		world:   w,
		id:      w.nextGroupID.Add(1) - 1,
		members: members,
		boxes:   make([]mailbox, len(members)),
		coll:    rendezvous{ops: make(map[uint64]*collOp)},
	}
}

func (g *group) size() int { return len(g.members) }

// mailbox is one rank's matching queues for one communicator. At most one
// of the two queues is non-empty for any (source, tag) pair.
type mailbox struct {
	mu         sync.Mutex
	unexpected []*envelope // sends not yet matched, in arrival order
	posted     []*request  // receives not yet matched, in posting order
}
