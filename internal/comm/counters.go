package comm

import (
	"maps"
	"slices"
	"sync"
)

// PhaseCount is the traffic attributed to one phase.
type PhaseCount struct {
	MsgsSent, MsgsRecv, BytesSent, BytesRecv, Collectives int64
	// Alltoalls is the part of Collectives that were Alltoall(v) calls,
	// whose traffic is counted as messages.
	Alltoalls int64
	// CollBytesSent and CollBytesRecv are the part of BytesSent and
	// BytesRecv moved by collectives counted without messages (Bcast,
	// Allgather(v), Allreduce).
	CollBytesSent, CollBytesRecv int64
	// The messages (and their bytes) to or from a rank on another node,
	// when the Counters know the nodes (SetNodes): a subset of MsgsSent,
	// MsgsRecv, BytesSent and BytesRecv.
	MsgsSentInter, MsgsRecvInter, BytesSentInter, BytesRecvInter int64
}

func (p *PhaseCount) add(q PhaseCount) {
	p.MsgsSent += q.MsgsSent
	p.MsgsRecv += q.MsgsRecv
	p.BytesSent += q.BytesSent
	p.BytesRecv += q.BytesRecv
	p.Collectives += q.Collectives
	p.Alltoalls += q.Alltoalls
	p.CollBytesSent += q.CollBytesSent
	p.CollBytesRecv += q.CollBytesRecv
	p.MsgsSentInter += q.MsgsSentInter
	p.MsgsRecvInter += q.MsgsRecvInter
	p.BytesSentInter += q.BytesSentInter
	p.BytesRecvInter += q.BytesRecvInter
}

// OtherPhase is the phase of traffic counted while no phase is set.
const OtherPhase = "other"

// Counters accumulates what Counting wrappers see, per world rank and
// phase. It is safe for concurrent use; in an in-memory world all ranks
// may share one.
type Counters struct {
	mu    sync.Mutex
	phase string
	ranks map[int]map[string]*PhaseCount // world rank -> phase -> counts
	nodes []int                          // node of each world rank, from SetNodes; nil: not split
}

// SetNodes makes every wrapper count which messages go to or come from a
// rank on another node: nodeOf[r] is the node of world rank r, which may
// differ from the in-memory world's own virtual nodes (a placement being
// modelled). Peers are known by their world rank only on in-memory
// communicators; on others, messages are not split. Call it before the
// ranks communicate; nodeOf is kept, not copied.
func (k *Counters) SetNodes(nodeOf []int) {
	k.mu.Lock()
	k.nodes = nodeOf
	k.mu.Unlock()
}

func (k *Counters) nodeLayout() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nodes
}

func NewCounters() *Counters {
	return &Counters{phase: OtherPhase, ranks: map[int]map[string]*PhaseCount{}}
}

// SetPhase attributes subsequent calls of every wrapper that has no phase
// of its own (see Phaser) to name; "" means OtherPhase. The phase is
// global to the Counters, so when all ranks of an in-memory world share
// one, prefer setting the phase on each rank's communicator.
func (k *Counters) SetPhase(name string) {
	k.mu.Lock()
	k.phase = phaseName(name)
	k.mu.Unlock()
}

func (k *Counters) currentPhase() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.phase
}

func phaseName(name string) string {
	if name == "" {
		return OtherPhase
	}
	return name
}

func (k *Counters) record(rank int, phase string, d PhaseCount) {
	k.mu.Lock()
	defer k.mu.Unlock()
	byPhase := k.ranks[rank]
	if byPhase == nil {
		byPhase = map[string]*PhaseCount{}
		k.ranks[rank] = byPhase
	}
	p := byPhase[phase]
	if p == nil {
		p = &PhaseCount{}
		byPhase[phase] = p
	}
	p.add(d)
}

// Snapshot returns the totals over all ranks, per phase.
func (k *Counters) Snapshot() map[string]PhaseCount {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]PhaseCount{}
	for _, byPhase := range k.ranks {
		for name, p := range byPhase {
			sum := out[name]
			sum.add(*p)
			out[name] = sum
		}
	}
	return out
}

// SnapshotRank returns one world rank's counts, per phase (empty if the
// rank has done nothing counted).
func (k *Counters) SnapshotRank(rank int) map[string]PhaseCount {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]PhaseCount{}
	for name, p := range k.ranks[rank] {
		out[name] = *p
	}
	return out
}

// Ranks returns the world ranks that have counts, for per-rank reports.
func (k *Counters) Ranks() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return sortedKeys(k.ranks)
}

// Reset forgets every count; the current phase stays.
func (k *Counters) Reset() {
	k.mu.Lock()
	clear(k.ranks)
	k.mu.Unlock()
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for r := range maps.Keys(m) {
		keys = append(keys, r)
	}
	slices.Sort(keys)
	return keys
}
