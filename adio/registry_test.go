package adio

import (
	"testing"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/stretchr/testify/require"
)

// The registry's bids reproduce step 6 of the table as documented at
// chooseStrategy, over a grid of situations.
func TestRegistryBids(t *testing.T) {
	want := func(s situation) string {
		switch {
		case s.nodes >= 2 && len(s.ranges) >= tamRanksPerNode*s.nodes:
			return hints.StrategyTAM
		case s.striped:
			return hints.StrategyTwoPhase
		case s.nodes == 1 && s.smallPieces():
			return hints.StrategyTwoPhase
		case s.nodes == 1:
			return hints.StrategyDynamic
		}
		return hints.StrategyTwoPhase
	}
	for _, nodes := range []int{1, 2, 3, 8} {
		for _, ranks := range []int{1, 4, 16, 32, 128, 512} {
			for _, striped := range []bool{false, true} {
				for _, pieces := range []int64{0, 10, 1 << 20} {
					s := situation{write: true, ranges: make([]coll.Range, ranks), nodes: nodes, striped: striped, bytes: 1 << 24, pieces: pieces}
					name, reason := collectivePick(s)
					require.Equal(t, want(s), name, "%+v", s)
					require.NotEmpty(t, reason)
				}
			}
		}
	}
}

// Every strategy is registered once, under a name the hint accepts.
func TestRegistryNames(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range registry {
		require.False(t, seen[r.name], r.name)
		seen[r.name] = true
		require.NotNil(t, r.impl)
		require.Equal(t, r.name, strategies[r.name].name)
		h, err := hints.Resolve(map[string]string{hints.CollioStrategy: r.name}, hints.Options{Getenv: func(string) string { return "" }})
		require.NoError(t, err, r.name)
		require.Equal(t, r.name, h.Enum(hints.CollioStrategy))
	}
	require.Len(t, strategies, len(registry))
}
