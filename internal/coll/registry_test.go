package coll

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type nop struct{}

func (nop) Write(*Job) error         { return nil }
func (nop) Read(*Job) (int64, error) { return 0, nil }

func newNop(Setting) Strategy { return nop{} }

func bidding(p int) func(Situation) Bid {
	return func(Situation) Bid { return Bid{Priority: p, Reason: "why"} }
}

func TestRegistryChoosesHighestBid(t *testing.T) {
	g := NewRegistry()
	name, _ := g.Choose(Situation{})
	require.Empty(t, name, "no strategy, no choice")
	g.Register(Registration{Name: "b", New: newNop, Bid: bidding(10)})
	g.Register(Registration{Name: "c", New: newNop, Bid: bidding(20)})
	g.Register(Registration{Name: "a", New: newNop}) // never bids
	g.Register(Registration{Name: "d", New: newNop, Bid: bidding(0)})
	name, reason := g.Choose(Situation{})
	require.Equal(t, "c", name)
	require.Equal(t, "why", reason)

	g.Register(Registration{Name: "bb", New: newNop, Bid: bidding(20)})
	name, _ = g.Choose(Situation{})
	require.Equal(t, "bb", name, "a tie goes to the first by name")

	var names []string
	for _, r := range g.All() {
		names = append(names, r.Name)
	}
	require.Equal(t, []string{"a", "b", "bb", "c", "d"}, names)
	r, ok := g.Lookup("c")
	require.True(t, ok)
	require.Equal(t, "c", r.Name)
	_, ok = g.Lookup("e")
	require.False(t, ok)
}

func TestRegistryRefusesBadRegistrations(t *testing.T) {
	g := NewRegistry()
	g.Register(Registration{Name: "a", New: newNop})
	require.Panics(t, func() { g.Register(Registration{Name: "a", New: newNop}) }, "twice")
	require.Panics(t, func() { g.Register(Registration{New: newNop}) }, "no name")
	require.Panics(t, func() { g.Register(Registration{Name: "b"}) }, "no New")
}

func TestSituationPieces(t *testing.T) {
	require.False(t, Situation{Bytes: 100}.SmallPieces(), "pieces unknown")
	require.Zero(t, Situation{Bytes: 100}.MeanPiece())
	require.True(t, Situation{Bytes: SmallPiece*4 - 1, Pieces: 4}.SmallPieces())
	require.False(t, Situation{Bytes: SmallPiece * 4, Pieces: 4}.SmallPieces())
	require.Equal(t, int64(25), Situation{Bytes: 100, Pieces: 4}.MeanPiece())
}
