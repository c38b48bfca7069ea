// Package tam runs collective file I/O with two-layer aggregation (TAM,
// Kang et al., "Improving MPI Collective I/O Performance With Intra-node
// Request Aggregation"): before the two-phase exchange, the ranks of each
// node hand their pieces to a few local aggregators on that node, which
// merge them into file order and coalesce pieces that touch; then only the
// local aggregators exchange with the global aggregators, which do the file
// I/O exactly as package twophase does. A global aggregator thus hears from
// at most the local aggregators instead of from every rank, and receives
// fewer, longer (offset, length) requests.
//
// # Planning
//
// The global layer is twophase's: the Job's Aggregators are the global
// aggregators, and the file domains, rounds and per-round windows come from
// twophase.PlanDomains with Config.Global (even domains, or stripe-cyclic
// ones when its StripeCount > 0), as two-phase's own rounds do, so TAM and two-phase
// agree on which aggregator writes which byte in which round.
//
// # One round of a write
//
// Layer 1 (intra-node: between ranks of one node of Config.Nodes, on
// Job.Comm, so no communicator is made per call): each rank that is not a
// local aggregator and whose access range meets a window of the round
// sends its local aggregator a fixed-size sizes message (pieces, bytes
// and list bytes per global aggregator) and then ONE payload message with
// its (offset, length) lists for all global aggregators followed by their
// data, both with Issend (synchronous sends, which the paper found best).
// A rank whose range meets no window of the round sends nothing; the local
// aggregator knows that from Job.Ranges.
//
// The local aggregator heap-merges its members' sorted lists per global
// aggregator and coalesces: pieces that touch or overlap in the file become
// one extent, their data laid out in file order. Where pieces overlap, the
// higher rank's bytes win (they are laid down in rank order), as in
// twophase's read-modify-write path.
//
// Layer 2 (inter-node): each local aggregator whose group's access range
// meets a global aggregator's window sends it a 24-byte header (extents,
// bytes, list bytes) and then one message with the extent list (coll's
// compact encoding, as twophase's) and the data. The global
// aggregator merges the local aggregators' lists and writes like twophase:
// contiguous runs with one pwritev each, or read-modify-write of the span
// when it has holes and Job.RMW is set (or when extents overlap).
//
// Reads run the layers in reverse: lists go up both layers, the global
// aggregator reads the span it was asked for and sends each local
// aggregator its extents' bytes, and the local aggregator sends each member
// its pieces' bytes.
//
// # Overlapping writes
//
// Within a local aggregator's group, the higher rank wins. Across groups,
// the group whose local aggregator has the higher rank wins. With
// topo.LocalAggregators on nodes of consecutive ranks (topo.Virtual, or any
// block placement) groups are consecutive rank ranges, so this is "higher
// rank wins" everywhere, as in twophase. Atomic mode (Job.Atomic), which
// promises that order, is run by twophase itself, as TAM's ROMIO branch
// does.
//
// # Messages and memory
//
// Point-to-point messages of both layers travel on Job.Comm with tags
// 7001..7003 (layer 1) and 7101..7103 (layer 2); the communicator must
// carry no other point-to-point traffic with those tags during the call
// (collio's file communicator is a private Dup).
// A rank that is neither a local nor a global aggregator holds, per round,
// its own pieces' lists and a packed copy of its own data for the round,
// nothing sized by cb_buffer_size. A local aggregator holds its group's
// pieces and data of the round (received, then coalesced); a global
// aggregator its window's data, as in twophase.
//
// Job.Overlap runs a global aggregator's writes behind the next round's
// exchange (coll.Pipeline, as twophase's rounds); reads are not
// pipelined. A global aggregator's and a local aggregator's layer-2
// buffers come from Job.Buffers when the caller keeps them.
//
// File errors never stop the exchange: an aggregator that fails keeps
// exchanging (reads send zeros) and reports the first error at the end, so
// no peer hangs.
package tam

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/metrics"
	"github.com/collio/collio/topo"
	"github.com/collio/collio/twophase"
)

// Config is the two layers' topology: the nodes (which decide who
// exchanges within a node) and the local aggregators with each rank's
// binding, and the global layer's file domains. Every rank must pass the
// same Config.
type Config struct {
	Nodes topo.Nodes // which node each rank is on (virtual nodes allowed)
	Local topo.Local // local aggregators and each rank's binding (topo.LocalAggregators)
	// Global draws the global aggregators' file domains, as two-phase's
	// (the zero rule: ROMIO's even domains).
	Global twophase.DomainRule
	// Report, if not nil, receives this rank's request counts (optional).
	Report *Report
}

// NewConfig is the default configuration for nodes: perNode local
// aggregators on each node (<= 0: TAM's default, ceil(512/nodes)).
func NewConfig(nodes topo.Nodes, perNode int) Config {
	return Config{Nodes: nodes, Local: topo.LocalAggregators(nodes, perNode)}
}

// Report counts one rank's requests over a call: the pieces it asked for
// (what two-phase would send a global aggregator: maximal runs contiguous
// in memory and in the file within one window), and, on local aggregators,
// the extents it sent the global aggregators after coalescing. Summed over
// ranks, Pieces is the request count before coalescing and Extents after.
type Report struct {
	Pieces  int64 // this rank's own pieces, all rounds and windows
	Extents int64 // extents this rank sent (or kept, as a global aggregator) in layer 2
	// Messages this rank received in each layer (self excluded).
	Layer1Recv, Layer2Recv int64
}

// Write runs a two-layer collective write on this rank. Every rank of
// j.Comm must call it with the same Aggregators, Ranges, hints and Config.
// The error is this rank's (a file error on a global aggregator, a
// communication error, or an invalid Job or Config, on every rank alike).
// The contract is twophase.Write's.
func Write(j *coll.Job, cfg Config) error {
	if j.Atomic {
		return twophase.Write(j, cfg.Global)
	}
	r, err := newRun(j, cfg)
	if err != nil || r == nil {
		return err
	}
	return r.write()
}

// Read runs a two-layer collective read on this rank and returns the
// number of bytes read: fewer than the access size only where the access
// extends past end of file. The contract is twophase.Read's.
func Read(j *coll.Job, cfg Config) (int64, error) {
	if j.Atomic {
		return twophase.Read(j, cfg.Global)
	}
	r, err := newRun(j, cfg)
	if err != nil || r == nil {
		return 0, err
	}
	return r.read()
}

// Message tags, all on the Job's communicator.
const (
	tagSizes   = 7001 // member -> local aggregator: counts per global aggregator
	tagPayload = 7002 // member -> local aggregator: lists (+ data for writes)
	tagDown    = 7003 // local aggregator -> member: read data
	tagHeader  = 7101 // local -> global aggregator: extents, bytes
	tagUp      = 7102 // local -> global aggregator: extent list (+ data for writes)
	tagData    = 7103 // global -> local aggregator: read data
)

// run is one call on one rank.
type run struct {
	j      *coll.Job
	rank   int
	size   int
	stats  *metrics.Call
	rep    *Report
	nodeOf []int // the node of every rank (Config.Nodes)

	// The global layer, as twophase plans it.
	global twophase.DomainRule
	span   coll.Range
	aggs   []int // active global aggregators, in domain order
	gIndex int   // this rank's index in aggs, or -1
	rounds int
	window func(i, m int) coll.Range

	// The local layer.
	bind      []int // bind[rank] = its local aggregator
	locals    []int // local aggregators, ascending
	localIdx  []int // localIdx[rank] = index in locals, or -1
	groupSpan []coll.Range
	members   []int // on a local aggregator: its group, ascending, itself included

	sl     *coll.Slicer
	contig bool // the access's memory is contiguous
	sc     scratch
	// io runs the global aggregators' file I/O (overlapped or not) and
	// keeps this rank's first file error; rounds continue so peers never
	// hang.
	io coll.Pipeline
	// oldEnd: where the file ended when a write began, so that
	// read-modify-write reads no holes past it.
	oldEnd coll.OldEnd
}

// newRun validates and plans; it returns nil (and no error) when no rank
// accesses anything. Its checks use only what every rank shares, so every
// rank gets the same verdict and none goes on alone.
func newRun(j *coll.Job, cfg Config) (*run, error) {
	if j.Comm == nil {
		return nil, fmt.Errorf("tam: no communicator")
	}
	n := j.Comm.Size()
	if err := j.Check(n); err != nil {
		return nil, fmt.Errorf("tam: %w", err)
	}
	if cfg.Local.Bind == nil {
		cfg.Local = topo.LocalAggregators(cfg.Nodes, 0)
	}
	if err := checkConfig(cfg, n); err != nil {
		return nil, err
	}
	r := &run{j: j, rank: j.Comm.Rank(), size: n, stats: j.Stats, rep: cfg.Report, gIndex: -1, nodeOf: cfg.Nodes.Of, global: cfg.Global}
	if r.stats == nil {
		r.stats = &metrics.Call{}
	}
	if r.rep == nil {
		r.rep = &Report{}
	}
	span, ok := coll.Span(j.Ranges)
	if !ok {
		return nil, nil // nothing to do anywhere
	}
	r.span = span
	r.plan()
	for i, a := range r.aggs {
		if a == r.rank {
			r.gIndex = i
		}
	}
	r.io = coll.Pipeline{Overlap: j.OverlapsRounds(r.rounds), Stats: r.stats}
	r.stats.Rounds = r.rounds
	r.stats.Aggregators = len(r.aggs)
	r.stats.Aggregator = r.gIndex >= 0
	r.local(cfg)
	r.sl, r.contig = coll.NewSlicer(j.Access), j.Access.MemContiguous()
	r.initScratch()
	return r, nil
}

func checkConfig(cfg Config, n int) error {
	if len(cfg.Nodes.Of) != n {
		return fmt.Errorf("tam: nodes given for %d ranks, communicator has %d", len(cfg.Nodes.Of), n)
	}
	if err := cfg.Nodes.Validate(); err != nil {
		return fmt.Errorf("tam: %w", err)
	}
	if len(cfg.Local.Bind) != n {
		return fmt.Errorf("tam: local aggregator binding for %d ranks, communicator has %d", len(cfg.Local.Bind), n)
	}
	for rk, a := range cfg.Local.Bind {
		switch {
		case a < 0 || a >= n:
			return fmt.Errorf("tam: rank %d bound to local aggregator %d, out of range", rk, a)
		case cfg.Local.Bind[a] != a:
			return fmt.Errorf("tam: rank %d bound to %d, which is not its own local aggregator", rk, a)
		case cfg.Nodes.Of[a] != cfg.Nodes.Of[rk]:
			return fmt.Errorf("tam: rank %d (node %d) bound to local aggregator %d on node %d",
				rk, cfg.Nodes.Of[rk], a, cfg.Nodes.Of[a])
		}
	}
	return nil
}

// plan is twophase's plan of the global layer.
func (r *run) plan() {
	d := twophase.PlanDomains(r.j, r.global, r.span)
	r.aggs, r.rounds, r.window = d.Aggs, d.Rounds, d.Window
}

// local derives the local layer from the configuration.
func (r *run) local(cfg Config) {
	n := r.size
	r.bind = cfg.Local.Bind
	r.localIdx = make([]int, n)
	for rk := range r.localIdx {
		r.localIdx[rk] = -1
	}
	for rk, a := range r.bind {
		if a == rk {
			r.localIdx[rk] = len(r.locals)
			r.locals = append(r.locals, rk)
		}
	}
	r.groupSpan = make([]coll.Range, len(r.locals))
	have := make([]bool, len(r.locals))
	for rk, a := range r.bind {
		g, x := r.localIdx[a], r.j.Ranges[rk]
		if x.Empty() {
			continue
		}
		if !have[g] {
			r.groupSpan[g], have[g] = x, true
			continue
		}
		r.groupSpan[g].Start = min(r.groupSpan[g].Start, x.Start)
		r.groupSpan[g].End = max(r.groupSpan[g].End, x.End)
	}
	if r.isLocal() {
		for rk, a := range r.bind {
			if a == r.rank {
				r.members = append(r.members, rk)
			}
		}
	}
}

func (r *run) isLocal() bool  { return r.bind[r.rank] == r.rank }
func (r *run) isGlobal() bool { return r.gIndex >= 0 }

// meets reports whether a and b share a byte.
func meets(a, b coll.Range) bool {
	return !a.Empty() && !b.Empty() && a.Start < b.End && b.Start < a.End
}

// memberActive says whether rank rk talks to its local aggregator in round
// m: its access range meets some global aggregator's window. Both sides
// compute it from Job.Ranges, so an idle rank sends nothing.
func (r *run) memberActive(rk, m int) bool {
	x := r.j.Ranges[rk]
	if x.Empty() {
		return false
	}
	for i := range r.aggs {
		if meets(x, r.window(i, m)) {
			return true
		}
	}
	return false
}

// groupActive says whether local aggregator g (index into locals) talks to
// global aggregator i in round m: its group's access span meets i's window.
func (r *run) groupActive(g, i, m int) bool {
	return meets(r.groupSpan[g], r.window(i, m))
}
