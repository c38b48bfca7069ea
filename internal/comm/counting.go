package comm

import (
	"sync"
	"sync/atomic"
)

// Counting wraps c so that its traffic is recorded in k, under the world
// rank of the caller and the current phase. Split, SplitNode and Dup
// results are wrapped with the same Counters, world rank and phase. A nil
// c or k gives c back unchanged.
//
// What is counted (only calls that succeed):
//   - Isend/Issend: one message sent and its bytes, when started.
//   - Irecv: one message received and the bytes it brought, when it
//     completes, in the phase that was current when it was posted.
//   - Alltoall(v): one collective (also counted in Alltoalls), and one
//     message to and one from each other rank with a nonzero count, with
//     its bytes: what a pairwise exchange sends. The rank's block to
//     itself is not counted.
//   - Bcast, Allgather(v), Iallgather, AllreduceInt64, Barrier, Split,
//     SplitNode, Dup: one collective, plus the bytes this rank contributes
//     (BytesSent: the root's buffer, the send buffer, 8 per value reduced)
//     and receives from others (BytesRecv: a non-root's buffer, the other
//     ranks' blocks, 8 per value of the result). No messages. These
//     bytes are also CollBytesSent and CollBytesRecv.
//
// With Counters.SetNodes, messages whose peer is on another node are also
// counted in the Inter fields (in-memory communicators only, where the
// peer's world rank is known; not Irecv from AnySource).
func Counting(c Comm, k *Counters) Comm {
	if c == nil || k == nil {
		return c
	}
	return newCounting(c, k, worldRankOf(c), new(atomic.Pointer[string]))
}

func newCounting(c Comm, k *Counters, worldRank int, phase *atomic.Pointer[string]) *countingComm {
	w := &countingComm{c: c, k: k, worldRank: worldRank, phase: phase}
	if nodes := k.nodeLayout(); nodes != nil && worldRank >= 0 && worldRank < len(nodes) {
		if peers := peerWorldRanks(c); peers != nil {
			w.nodes, w.peers, w.myNode = nodes, peers, nodes[worldRank]
		}
	}
	return w
}

// peerWorldRanks is the world rank of each rank of c where the
// implementation knows it (in memory), else nil.
func peerWorldRanks(c Comm) []int {
	if m, ok := As[*memComm](c); ok {
		return m.g.members
	}
	return nil
}

// Phaser is implemented by communicators that attribute traffic to
// phases, such as the Counting wrapper.
type Phaser interface {
	// SetPhase attributes this rank's subsequent calls (on this
	// communicator and those split from it) to name; "" means OtherPhase.
	SetPhase(name string)
}

// SetPhase sets the phase of c's rank if c, or a communicator it wraps,
// is a Phaser. It reports whether one was found.
func SetPhase(c Comm, name string) bool {
	for c != nil {
		if p, ok := c.(Phaser); ok {
			p.SetPhase(name)
			return true
		}
		u, ok := c.(interface{ Unwrap() Comm })
		if !ok {
			return false
		}
		c = u.Unwrap()
	}
	return false
}

// worldRankOf is the world rank behind c where the implementation knows
// it, else c's own rank.
func worldRankOf(c Comm) int {
	for {
		switch v := c.(type) {
		case *memComm:
			return v.worldRank()
		case *countingComm:
			return v.worldRank
		case interface{ Unwrap() Comm }:
			c = v.Unwrap()
		default:
			return c.Rank()
		}
	}
}

type countingComm struct {
	c         Comm
	k         *Counters
	worldRank int
	phase     *atomic.Pointer[string] // this rank's own phase, shared with derived comms; nil: the Counters' phase
	// With the Counters' node layout: the node of each world rank, the
	// world rank of each rank of c, and this rank's node.
	nodes, peers []int
	myNode       int
}

// inter reports whether rank peer of this communicator is on another
// node (false when the nodes are not known).
func (w *countingComm) inter(peer int) bool {
	return w.peers != nil && peer >= 0 && peer < len(w.peers) && w.nodes[w.peers[peer]] != w.myNode
}

// sent is one message of n bytes to peer.
func (w *countingComm) sent(peer, n int) PhaseCount {
	d := PhaseCount{MsgsSent: 1, BytesSent: int64(n)}
	if w.inter(peer) {
		d.MsgsSentInter, d.BytesSentInter = 1, int64(n)
	}
	return d
}

// Unwrap returns the wrapped communicator.
func (w *countingComm) Unwrap() Comm { return w.c }

func (w *countingComm) SetPhase(name string) {
	n := phaseName(name)
	w.phase.Store(&n)
}

func (w *countingComm) currentPhase() string {
	if p := w.phase.Load(); p != nil {
		return *p
	}
	return w.k.currentPhase()
}

// count records d if err is nil and passes err on.
func (w *countingComm) count(err error, d PhaseCount) error {
	if err == nil {
		w.k.record(w.worldRank, w.currentPhase(), d)
	}
	return err
}

func (w *countingComm) Rank() int { return w.c.Rank() }
func (w *countingComm) Size() int { return w.c.Size() }

func (w *countingComm) Barrier() error {
	return w.count(w.c.Barrier(), PhaseCount{Collectives: 1})
}

func (w *countingComm) Bcast(buf []byte, root int) error {
	n := int64(len(buf))
	d := PhaseCount{Collectives: 1, BytesRecv: n, CollBytesRecv: n}
	if root == w.c.Rank() {
		d = PhaseCount{Collectives: 1, BytesSent: n, CollBytesSent: n}
	}
	return w.count(w.c.Bcast(buf, root), d)
}

func (w *countingComm) Allgather(send, recv []byte) error {
	return w.count(w.c.Allgather(send, recv), gatherCount(send, w.c.Size()))
}

func gatherCount(send []byte, size int) PhaseCount {
	out, in := int64(len(send)), int64(len(send))*int64(size-1)
	return PhaseCount{Collectives: 1, BytesSent: out, BytesRecv: in, CollBytesSent: out, CollBytesRecv: in}
}

func (w *countingComm) Allgatherv(send, recv []byte, counts, displs []int) error {
	err := w.c.Allgatherv(send, recv, counts, displs)
	d := PhaseCount{Collectives: 1, BytesSent: int64(len(send))}
	for j, n := range counts {
		if j != w.c.Rank() {
			d.BytesRecv += int64(n)
		}
	}
	d.CollBytesSent, d.CollBytesRecv = d.BytesSent, d.BytesRecv
	return w.count(err, d)
}

func (w *countingComm) Alltoall(send, recv []byte, n int) error {
	d := PhaseCount{Collectives: 1, Alltoalls: 1}
	if peers := int64(w.c.Size() - 1); n > 0 {
		d.MsgsSent, d.MsgsRecv = peers, peers
		d.BytesSent, d.BytesRecv = peers*int64(n), peers*int64(n)
		if w.peers != nil {
			var inter int64
			for j := range w.c.Size() {
				if w.inter(j) {
					inter++
				}
			}
			d.MsgsSentInter, d.MsgsRecvInter = inter, inter
			d.BytesSentInter, d.BytesRecvInter = inter*int64(n), inter*int64(n)
		}
	}
	return w.count(w.c.Alltoall(send, recv, n), d)
}

func (w *countingComm) Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	err := w.c.Alltoallv(send, scounts, sdispls, recv, rcounts, rdispls)
	d := PhaseCount{Collectives: 1, Alltoalls: 1}
	me := w.c.Rank()
	for j, n := range scounts {
		if j != me && n > 0 {
			d.add(w.sent(j, n))
		}
	}
	for j, n := range rcounts {
		if j != me && n > 0 {
			d.MsgsRecv++
			d.BytesRecv += int64(n)
			if w.inter(j) {
				d.MsgsRecvInter++
				d.BytesRecvInter += int64(n)
			}
		}
	}
	return w.count(err, d)
}

func (w *countingComm) AllreduceInt64(in, out []int64, op Op) error {
	out8, in8 := 8*int64(len(in)), 8*int64(len(out))
	d := PhaseCount{Collectives: 1, BytesSent: out8, BytesRecv: in8, CollBytesSent: out8, CollBytesRecv: in8}
	return w.count(w.c.AllreduceInt64(in, out, op), d)
}

func (w *countingComm) Isend(buf []byte, dest, tag int) (Request, error) {
	r, err := w.c.Isend(buf, dest, tag)
	return r, w.count(err, w.sent(dest, len(buf)))
}

func (w *countingComm) Issend(buf []byte, dest, tag int) (Request, error) {
	r, err := w.c.Issend(buf, dest, tag)
	return r, w.count(err, w.sent(dest, len(buf)))
}

func (w *countingComm) Irecv(buf []byte, src, tag int) (Request, error) {
	r, err := w.c.Irecv(buf, src, tag)
	if err != nil {
		return nil, err
	}
	return &countedRecv{Request: r, k: w.k, rank: w.worldRank, phase: w.currentPhase(), inter: w.inter(src)}, nil
}

func (w *countingComm) Iallgather(send, recv []byte) (Request, error) {
	r, err := w.c.Iallgather(send, recv)
	return r, w.count(err, gatherCount(send, w.c.Size()))
}

func (w *countingComm) Split(color, key int) (Comm, error) {
	return w.derived(w.c.Split(color, key))
}

func (w *countingComm) SplitNode() (Comm, error) { return w.derived(w.c.SplitNode()) }
func (w *countingComm) Dup() (Comm, error)       { return w.derived(w.c.Dup()) }
func (w *countingComm) Free() error              { return w.c.Free() }

// derived wraps a communicator made from w, keeping rank and phase.
func (w *countingComm) derived(c Comm, err error) (Comm, error) {
	if err := w.count(err, PhaseCount{Collectives: 1}); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, nil
	}
	return newCounting(c, w.k, w.worldRank, w.phase), nil
}

// countedRecv counts its message once, when it is first seen complete.
type countedRecv struct {
	Request
	k     *Counters
	rank  int
	phase string
	inter bool // from a rank on another node
	once  sync.Once
}

func (r *countedRecv) Wait() error {
	err := r.Request.Wait()
	r.seen(true, err)
	return err
}

func (r *countedRecv) Test() (bool, error) {
	done, err := r.Request.Test()
	r.seen(done, err)
	return done, err
}

func (r *countedRecv) seen(done bool, err error) {
	if done && err == nil {
		r.once.Do(func() {
			d := PhaseCount{MsgsRecv: 1, BytesRecv: int64(r.Request.Count())}
			if r.inter {
				d.MsgsRecvInter, d.BytesRecvInter = 1, d.BytesRecv
			}
			r.k.record(r.rank, r.phase, d)
		})
	}
}

var _ Phaser = (*countingComm)(nil)
