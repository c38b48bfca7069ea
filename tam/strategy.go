package tam

import (
	"fmt"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/twophase"
)

// TAM keeps the open-time aggregators (ROMIO's, one per node) as its
// global ones: no Aggregators rule.
func init() { coll.Register(coll.Registration{Name: hints.StrategyTAM, New: newStrategy, Bid: Bid}) }

func newStrategy(s coll.Setting) coll.Strategy { return New(s) }

// Strategy is TAM for one file: its two layers (local aggregators placed
// once, O(ranks)) and two-phase for the global layer's domains.
type Strategy struct {
	cfg    Config
	global twophase.Strategy
}

// New makes TAM for a file, with collio_tam_local_aggregators local
// aggregators per node (0: TAM's default).
func New(s coll.Setting) Strategy {
	perNode := 0
	if s.Hints != nil {
		perNode = int(s.Hints.Int(hints.CollioTAMLocal))
	}
	return Strategy{cfg: NewConfig(s.Nodes, perNode), global: twophase.New(s)}
}

// Write runs a two-layer collective write.
func (s Strategy) Write(j *coll.Job) error {
	cfg := s.cfg
	cfg.Global = s.global.Rule(j, true)
	return Write(j, cfg)
}

// Read runs a two-layer collective read.
func (s Strategy) Read(j *coll.Job) (int64, error) {
	cfg := s.cfg
	cfg.Global = s.global.Rule(j, false)
	return Read(j, cfg)
}

// RanksPerNode is how many ranks per node (on average, on several nodes)
// make TAM bid: below it the intra-node layer saves too few messages to
// pay for moving the data twice (the paper's runs use 64 per node; the
// scale study in docs/benchmarks.md shows the message counts).
const RanksPerNode = 16

// bid is above every other strategy's: where it bids, TAM is chosen.
const bid = 40

// Bid is TAM's say in the automatic choice.
func Bid(s coll.Situation) coll.Bid {
	if s.Nodes >= 2 && len(s.Ranges) >= RanksPerNode*s.Nodes {
		return coll.Bid{Priority: bid, Reason: fmt.Sprintf("%d ranks per node: two-layer aggregation (TAM)", len(s.Ranges)/s.Nodes)}
	}
	return coll.Bid{}
}
