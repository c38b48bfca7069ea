package twophase

import (
	"fmt"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/topo"
)

func init() {
	coll.Register(coll.Registration{Name: hints.StrategyTwoPhase, New: newStrategy, Bid: Bid, Aggregators: Aggregators})
}

func newStrategy(s coll.Setting) coll.Strategy { return New(s) }

// Options are the hints that decide two-phase's file domains.
type Options struct {
	FileDomains    string // collio_file_domains
	StripingUnit   int64  // striping_unit: as the file system reports it, else as asked
	StripingFactor int64  // striping_factor
	MinDomain      int64  // romio_min_fdomain_size
	CoRatio        int64  // romio_lustre_co_ratio
}

// OptionsFrom reads two-phase's options from a file's hints.
func OptionsFrom(h *hints.Set) Options {
	return Options{
		FileDomains:    h.Enum(hints.CollioFileDomains),
		StripingUnit:   h.Int(hints.StripingUnit),
		StripingFactor: h.Int(hints.StripingFactor),
		MinDomain:      h.Int(hints.RomioMinFdomainSize),
		CoRatio:        h.Int(hints.RomioLustreCoRatio),
	}
}

// DomainRule is how one call's file domains are drawn (engine.plan):
// ROMIO's even domains with inner edges on Stripe, stripe-cyclic ones,
// affinity domains, or each rank's own blocks.
type DomainRule struct {
	MinDomain int64 // romio_min_fdomain_size
	Stripe    int64 // align domain boundaries to it (0: do not)
	// StripeCount > 0 (with Stripe) selects stripe-cyclic domains, as
	// ROMIO's Lustre driver. CoRatio is romio_lustre_co_ratio
	// (aggregators per storage target).
	StripeCount int
	CoRatio     int
	// AffinityBlock > 0 (and at most the Job's BufSize, with two or more
	// aggregators and no StripeCount) selects affinity domains of blocks
	// of this size; they need the Job's TotalBytes.
	AffinityBlock int64
	// NodeOf, when set, is the node of every rank: affinity domains then
	// give the blocks of a rank that does not aggregate to an aggregator
	// on its node.
	NodeOf []int
	// OwnGrid > 0 lets the call run without a plan or an exchange when
	// the Job's Own reports (at this grid) show the blocks tile the span,
	// each rank touching its own, and every rank with data aggregates. It
	// needs affinity domains to be allowed, as AffinityBlock does, but
	// not their size.
	OwnGrid int64
}

// Strategy is two-phase for one file: its options and what the file
// system and the placement of ranks say.
type Strategy struct {
	opts   Options
	layout driver.Layout
	nodes  topo.Nodes
}

// New makes two-phase for a file.
func New(s coll.Setting) Strategy {
	return Strategy{opts: OptionsFrom(s.Hints), layout: s.Layout, nodes: s.Nodes}
}

// Write runs a collective write with the domains Rule draws.
func (s Strategy) Write(j *coll.Job) error { return Write(j, s.Rule(j, true)) }

// Read runs a collective read with the domains Rule draws.
func (s Strategy) Read(j *coll.Job) (int64, error) { return Read(j, s.Rule(j, false)) }

func (s Strategy) striped() bool {
	return coll.Setting{Layout: s.layout}.Striped()
}

// affinity reports whether affinity domains (and own blocks) are allowed:
// collio_file_domains=affinity, or auto without striping.
func (s Strategy) affinity() bool {
	switch s.opts.FileDomains {
	case hints.DomainsAffinity:
		return true
	case hints.DomainsAuto:
		return !s.striped()
	}
	return false
}

// ReportsOwnBlocks: ranks report their own blocks in the call's entry
// record wherever affinity domains are allowed.
func (s Strategy) ReportsOwnBlocks() bool { return s.affinity() }

// OwnBlocks is this rank's report at the file's own-blocks grid.
func (s Strategy) OwnBlocks(a coll.Access) coll.OwnBlocks {
	return CountOwnBlocks(a, OwnGrid(s.opts.StripingUnit))
}

// Rule draws j's file domains from the options, the file's layout and
// the ranks' nodes. TAM's global layer plans with it too.
func (s Strategy) Rule(j *coll.Job, write bool) DomainRule {
	o := s.opts
	r := DomainRule{MinDomain: o.MinDomain, Stripe: o.StripingUnit, CoRatio: 1}
	switch o.FileDomains {
	case hints.DomainsAuto:
		if s.striped() {
			r.StripeCount = s.layout.StripeCount
		}
	case hints.DomainsCyclic:
		r.StripeCount = max(s.layout.StripeCount, int(o.StripingFactor), 1)
	case hints.DomainsEven:
		r.Stripe = 0
	}
	if write { // ROMIO uses the ratio for writes only
		r.CoRatio = int(o.CoRatio)
	}
	if span, ok := coll.Span(j.Ranges); ok && s.affinity() {
		r.OwnGrid = OwnGrid(o.StripingUnit)
		// On one node a byte that crosses ranks is one memory copy, less
		// than the Allreduce that affinity domains cost and the scattered
		// windows they leave; calls whose ranks own their blocks skip
		// both (own blocks). Writes on several nodes, or the hint, plan
		// them. Reads there do not: each node's client reads ahead of a
		// scattered block into the next ones, which other nodes read, and
		// the servers send much of the data twice.
		if (write && s.nodes.Count() > 1 && !j.NoAffinityDomains) || o.FileDomains == hints.DomainsAffinity {
			r.AffinityBlock = AffinityBlockSize(span, len(j.Aggregators), j.BufSize, r.Stripe)
		}
	}
	if s.nodes.Count() > 1 {
		r.NodeOf = s.nodes.Of
	}
	return r
}

// Bids in the automatic choice (coll.Bid): two-phase where it is known to
// do better than segmentation (bidSuited) and anywhere else as the
// fallback (bidAnywhere).
const (
	bidSuited   = 30
	bidAnywhere = 10
)

// Bid is two-phase's say in the automatic choice.
func Bid(s coll.Situation) coll.Bid {
	switch {
	case s.Striped:
		return coll.Bid{Priority: bidSuited, Reason: "striped file system: two-phase, stripe-aligned domains"}
	case s.Nodes == 1 && s.SmallPieces():
		return coll.Bid{Priority: bidSuited, Reason: fmt.Sprintf("one node, %d pieces of %d bytes on average: two-phase merges them", s.Pieces, s.MeanPiece())}
	case s.Nodes == 1 && s.Write && coll.Interleaved(s.Ranges):
		// Each aggregator writes its domain in one run instead of every
		// rank writing its share piece by piece (writes of one file queue
		// on its inode lock; reads from the page cache do not).
		return coll.Bid{Priority: bidSuited, Reason: "one node, writes interleave: two-phase merges them"}
	case s.Nodes == 1:
		return coll.Bid{Priority: bidAnywhere, Reason: "one node: two-phase"}
	}
	return coll.Bid{Priority: bidAnywhere, Reason: "several nodes: two-phase"}
}

// Aggregators is two-phase's rule: on one node every rank (no network to
// save: each rank writes its own domain's data, and an aggregator's own
// data never goes through the exchange), else one per
// collio_bytes_per_agg bytes of the open-time ones.
func Aggregators(s coll.Situation) coll.AggregatorRule {
	if s.Nodes == 1 {
		return coll.EveryRank
	}
	return coll.ByVolume
}
