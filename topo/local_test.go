package topo

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestLocalAggregatorsEvenSpacing(t *testing.T) {
	l := LocalAggregators(Virtual(16, 8), 2)
	require.Equal(t, []int{0, 4, 8, 12}, l.Aggs)
	require.Equal(t, []int{0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12}, l.Bind)
	require.Equal(t, []int{4, 5, 6, 7}, l.Members(4))
	require.Nil(t, l.Members(5))

	// 7 ranks, 3 groups: positions 0, 2, 4; sizes 2, 2, 3.
	l = LocalAggregators(Virtual(7, 7), 3)
	require.Equal(t, []int{0, 2, 4}, l.Aggs)
	require.Equal(t, []int{0, 0, 2, 2, 4, 4, 4}, l.Bind)

	// More requested than the node has: every rank its own aggregator.
	l = LocalAggregators(Virtual(10, 4), 4)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, l.Aggs)
	require.Equal(t, l.Aggs, l.Bind)

	// Interleaved placement: groups are contiguous in the node's rank order.
	rr := Nodes{Of: []int{0, 1, 0, 1, 0, 1, 0, 1}, Names: []string{"a", "b"}}
	l = LocalAggregators(rr, 2)
	require.Equal(t, []int{0, 1, 4, 5}, l.Aggs)
	require.Equal(t, []int{0, 1, 0, 1, 4, 5, 4, 5}, l.Bind)
}

func TestLocalAggregatorsDefault(t *testing.T) {
	// 2 nodes: ceil(512/2) = 256 per node, more than the 8 ranks there.
	l := LocalAggregators(Virtual(16, 8), 0)
	require.Len(t, l.Aggs, 16)
	// 600 nodes of 2 ranks: ceil(512/600) = 1 per node.
	l = LocalAggregators(Virtual(1200, 2), 0)
	require.Len(t, l.Aggs, 600)
	require.Equal(t, 2, l.Aggs[1])
	// 200 nodes of 4: ceil(512/200) = 3 per node.
	l = LocalAggregators(Virtual(800, 4), -1)
	require.Len(t, l.Aggs, 600)
	require.Equal(t, []int{0, 1, 2, 4, 5, 6}, l.Aggs[:6])
	require.Equal(t, []int{0, 1, 2, 2, 4}, l.Bind[:5])
	// No ranks.
	l = LocalAggregators(Nodes{}, 0)
	require.Empty(t, l.Aggs)
	require.Empty(t, l.Bind)
}

func TestLocalAggregatorsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := genNodes(t)
		perNode := rapid.IntRange(-1, 12).Draw(t, "perNode")
		l := LocalAggregators(n, perNode)
		if len(l.Bind) != len(n.Of) || !slices.IsSorted(l.Aggs) {
			t.Fatalf("bad shape: %+v", l)
		}
		isAgg := make(map[int]bool)
		for _, a := range l.Aggs {
			if isAgg[a] {
				t.Fatalf("aggregator %d twice", a)
			}
			isAgg[a] = true
		}
		for k, m := range n.members() {
			want := len(m)
			if perNode > 0 {
				want = min(perNode, len(m))
			} else {
				want = min(max(1, (DefaultLocalTotal+n.Count()-1)/n.Count()), len(m))
			}
			// Walk the node's ranks: groups are contiguous runs, each
			// led by its aggregator, sizes differing by at most one.
			var sizes []int
			for i, r := range m {
				a := l.Bind[r]
				if n.Of[a] != k || !isAgg[a] {
					t.Fatalf("rank %d bound to %d, not a local aggregator of node %d", r, a, k)
				}
				if i == 0 || a != l.Bind[m[i-1]] {
					if a != r {
						t.Fatalf("group of %d does not start at its aggregator (rank %d)", a, r)
					}
					sizes = append(sizes, 0)
				}
				sizes[len(sizes)-1]++
			}
			if len(sizes) != want {
				t.Fatalf("node %d: %d groups, want %d", k, len(sizes), want)
			}
			if slices.Max(sizes)-slices.Min(sizes) > 1 {
				t.Fatalf("node %d: unbalanced groups %v", k, sizes)
			}
		}
	})
}
