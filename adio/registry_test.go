package adio

import (
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/stretchr/testify/require"

	// The strategies, registered as a program that imports collio has them.
	_ "github.com/collio/collio/independent"
	_ "github.com/collio/collio/segment"
	_ "github.com/collio/collio/tam"
	_ "github.com/collio/collio/twophase"
)

// The registered bids reproduce step 6 of the table as documented at
// chooseStrategy, over a grid of situations.
func TestRegistryBids(t *testing.T) {
	const tamRanksPerNode = 16 // tam.RanksPerNode
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

// The five strategies are registered, each under a name the hint
// accepts, and every value of the hint but auto names one.
func TestRegistryNames(t *testing.T) {
	require.Equal(t, []string{hints.StrategyDynamic, hints.StrategyIndependent, hints.StrategyStatic,
		hints.StrategyTAM, hints.StrategyTwoPhase}, Available())
	for _, name := range Available() {
		h, err := hints.Resolve(map[string]string{hints.CollioStrategy: name}, hints.Options{Getenv: func(string) string { return "" }})
		require.NoError(t, err, name)
		require.Equal(t, name, h.Enum(hints.CollioStrategy))
	}
}

// The aggregators each strategy's rule asks for, as the table in
// docs/strategies.md#aggregators describes them.
func TestRegistryAggregatorRules(t *testing.T) {
	rule := func(name string, s situation) coll.AggregatorRule {
		r, ok := coll.Lookup(name)
		require.True(t, ok, name)
		if r.Aggregators == nil {
			return coll.OpenAggregators
		}
		return r.Aggregators(s.bidding())
	}
	oneNode := situation{nodes: 1, bytes: 1 << 20, pieces: 16}
	tiny := situation{nodes: 1, bytes: 1 << 10, pieces: 16}
	nodes := situation{nodes: 2, bytes: 1 << 20, pieces: 16}
	for _, tc := range []struct {
		name       string
		s          situation
		want       coll.AggregatorRule
		annotation string
	}{
		{hints.StrategyTwoPhase, oneNode, coll.EveryRank, "two-phase, one node"},
		{hints.StrategyTwoPhase, tiny, coll.EveryRank, "two-phase, one node, tiny pieces"},
		{hints.StrategyTwoPhase, nodes, coll.ByVolume, "two-phase, nodes"},
		{hints.StrategyDynamic, oneNode, coll.EveryRank, "dynamic, one node"},
		{hints.StrategyStatic, tiny, coll.OpenAggregators, "static, one node, tiny pieces"},
		{hints.StrategyDynamic, nodes, coll.ByVolume, "dynamic, nodes"},
		{hints.StrategyTAM, oneNode, coll.OpenAggregators, "tam"},
		{hints.StrategyIndependent, oneNode, coll.NotAggregating, "independent"},
	} {
		require.Equal(t, tc.want, rule(tc.name, tc.s), tc.annotation)
	}
}

// adio names no strategy package: strategies reach it only through the
// registry, so a new one needs no edit here.
func TestNoStrategyPackageImported(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ImportsOnly)
	require.NoError(t, err)
	for _, p := range pkgs {
		for name, f := range p.Files {
			for _, imp := range f.Imports {
				for _, s := range []string{"twophase", "segment", "tam", "independent"} {
					require.NotEqual(t, `"github.com/collio/collio/`+s+`"`, imp.Path.Value, name)
				}
			}
		}
	}
}
