package segment

import (
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
)

// Static segmentation does not bid: it is chosen by name only.
func init() {
	dynamic := func(coll.Setting) coll.Strategy { return Strategy{Dynamic: true} }
	static := func(coll.Setting) coll.Strategy { return Strategy{Dynamic: false} }
	coll.Register(coll.Registration{Name: hints.StrategyDynamic, New: dynamic, Bid: Bid, Aggregators: Aggregators})
	coll.Register(coll.Registration{Name: hints.StrategyStatic, New: static, Aggregators: Aggregators})
}

// Strategy is dynamic or static segmentation; it reads no hints.
type Strategy struct{ Dynamic bool }

// Write runs a collective write (Write).
func (s Strategy) Write(j *coll.Job) error { return Write(j, s.Dynamic) }

// Read runs a collective read (Read).
func (s Strategy) Read(j *coll.Job) (int64, error) { return Read(j, s.Dynamic) }

// bid is under two-phase's where two-phase is known to do better and
// above its fallback.
const bid = 20

// Bid is dynamic segmentation's say in the automatic choice: one node
// without striping, where there is no read-modify-write and, with
// automatic aggregators, every rank writes its own pieces.
func Bid(s coll.Situation) coll.Bid {
	if s.Nodes == 1 && !s.Striped {
		return coll.Bid{Priority: bid, Reason: "one node, no striping: dynamic segmentation"}
	}
	return coll.Bid{}
}

// Aggregators is segmentation's rule: two-phase's (every rank on one
// node, else by volume), except on one node with pieces under
// coll.SmallPiece, where a group per rank would write them one system
// call each: the open-time aggregators (ROMIO's, one per node) merge them
// instead.
func Aggregators(s coll.Situation) coll.AggregatorRule {
	switch {
	case s.Nodes == 1 && s.SmallPieces():
		return coll.OpenAggregators
	case s.Nodes == 1:
		return coll.EveryRank
	}
	return coll.ByVolume
}
