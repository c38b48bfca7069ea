package topo

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/collio/collio/hints"
)

func list(t *testing.T, s string) []hints.ConfigEntry {
	t.Helper()
	l, err := hints.ParseConfigList(s)
	require.NoError(t, err)
	return l
}

// named is three nodes of 4 ranks: alpha (0-3), beta (4-7), gamma (8-11).
func named() Nodes {
	n := Virtual(12, 4)
	n.Names = []string{"alpha", "beta", "gamma"}
	return n
}

func TestAggregatorsDefaultOnePerNode(t *testing.T) {
	n := Virtual(10, 4)
	for _, l := range [][]hints.ConfigEntry{nil, {}, list(t, "*:1"), list(t, "*")} {
		aggs, warn := Aggregators(n, 0, l)
		require.Equal(t, []int{0, 4, 8}, aggs)
		require.Empty(t, warn)
	}
}

func TestAggregatorsPerNodeRoundRobin(t *testing.T) {
	n := Virtual(10, 4)
	aggs, warn := Aggregators(n, 0, list(t, "*:2"))
	require.Empty(t, warn)
	// Node 2 has 2 ranks: both. Nodes 0 and 1: positions 0 and 2.
	require.Equal(t, []int{0, 4, 8, 2, 6, 9}, aggs)

	aggs, _ = Aggregators(n, 0, list(t, "*:*"))
	require.Equal(t, []int{0, 4, 8, 1, 5, 9, 2, 6, 3, 7}, aggs)
}

func TestAggregatorsSpreadWithinNode(t *testing.T) {
	n := Virtual(16, 8)
	aggs, _ := Aggregators(n, 0, list(t, "*:2"))
	require.Equal(t, []int{0, 8, 4, 12}, aggs)
	aggs, _ = Aggregators(n, 0, list(t, "*:3"))
	require.Equal(t, []int{0, 8, 2, 10, 5, 13}, aggs)
	// Spread over the node's ranks even when they are not consecutive.
	rr := Nodes{Of: []int{0, 1, 0, 1, 0, 1, 0, 1}, Names: []string{"a", "b"}}
	aggs, _ = Aggregators(rr, 0, list(t, "*:2"))
	require.Equal(t, []int{0, 1, 4, 5}, aggs)
}

func TestAggregatorsNamedHosts(t *testing.T) {
	n := named()
	for _, tc := range []struct {
		list string
		want []int
	}{
		{"beta:2", []int{4, 6}},
		{"beta", []int{4}},
		{"beta:*", []int{4, 5, 6, 7}},
		{"gamma:1,alpha:1", []int{0, 8}},           // domain order is node order
		{"beta:1,beta:1", []int{4, 6}},             // a rank is used once: two distinct ranks
		{"beta:3,beta:3", []int{4, 5, 6, 7}},       // and never more than the node has
		{"nosuch:4,beta:1", []int{4}},              // unknown names are ignored
		{"alpha:1,*:1", []int{0, 4, 8, 2}},         // alpha:1 then one more everywhere
		{"gamma:9,*:1", []int{0, 4, 8, 9, 10, 11}}, // gamma already full
	} {
		aggs, warn := Aggregators(n, 0, list(t, tc.list))
		require.Equal(t, tc.want, aggs, tc.list)
		require.Empty(t, warn, tc.list)
	}
}

func TestAggregatorsUnknownHostFallsBack(t *testing.T) {
	n := named()
	aggs, warn := Aggregators(n, 0, list(t, "nosuch:2,other:*"))
	require.Equal(t, []int{0, 4, 8}, aggs)
	require.Contains(t, warn, "nosuch:2,other:*")
	require.Contains(t, warn, "alpha")
	// The fallback is capped too.
	aggs, warn = Aggregators(n, 2, list(t, "nosuch:2"))
	require.Equal(t, []int{0, 4}, aggs)
	require.NotEmpty(t, warn)
}

func TestAggregatorsCap(t *testing.T) {
	n := Virtual(12, 4)
	all, _ := Aggregators(n, 0, list(t, "*:*"))
	require.Len(t, all, 12)
	for cap := 1; cap <= 12; cap++ {
		aggs, warn := Aggregators(n, cap, list(t, "*:*"))
		require.Empty(t, warn)
		require.Len(t, aggs, cap)
		// A cap inside "*:*" keeps the nodes balanced.
		perNode := make([]int, n.Count())
		for _, a := range aggs {
			perNode[n.Of[a]]++
		}
		require.LessOrEqual(t, slices.Max(perNode)-slices.Min(perNode), 1, "cap %d: %v", cap, aggs)
	}
	// cb_nodes above nprocs is no cap.
	aggs, _ := Aggregators(n, 100, list(t, "*:*"))
	require.Equal(t, all, aggs)
	// Caps on the default list.
	aggs, _ = Aggregators(n, 1, nil)
	require.Equal(t, []int{0}, aggs)
	aggs, _ = Aggregators(n, 2, nil)
	require.Equal(t, []int{0, 4}, aggs)
	aggs, _ = Aggregators(n, 5, nil)
	require.Equal(t, []int{0, 4, 8}, aggs)
	// A cap of 3 on "*:2": one per node, each at its first rank.
	aggs, _ = Aggregators(n, 3, list(t, "*:2"))
	require.Equal(t, []int{0, 4, 8}, aggs)
	// A cap of 4 on "*:2": node 0 gets its second aggregator, spread.
	aggs, _ = Aggregators(n, 4, list(t, "*:2"))
	require.Equal(t, []int{0, 4, 8, 2}, aggs)
	// The cap is consumed in entry order.
	aggs, _ = Aggregators(named(), 1, list(t, "gamma:1,*:1"))
	require.Equal(t, []int{8}, aggs)
	aggs, _ = Aggregators(named(), 2, list(t, "gamma:2,*:1"))
	require.Equal(t, []int{8, 10}, aggs)
}

func TestAggregatorsNoRanks(t *testing.T) {
	aggs, warn := Aggregators(Nodes{}, 0, nil)
	require.Empty(t, aggs)
	require.Empty(t, warn)
}

func TestTakeMatchesOneAtATime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := rapid.SliceOfN(rapid.IntRange(0, 6), 1, 6).Draw(t, "want")
		left := rapid.IntRange(0, 40).Draw(t, "left")
		got := make([]int, len(want))
		n := take(got, want, left)

		ref := make([]int, len(want))
		w := slices.Clone(want)
		given := 0
		for more := true; more && given < left; {
			more = false
			for k := range w {
				if w[k] > 0 && given < left {
					w[k]--
					ref[k]++
					given++
					more = more || w[k] > 0
				}
			}
		}
		if n != given || !slices.Equal(got, ref) {
			t.Fatalf("take(%v, %d) = %v (%d), want %v (%d)", want, left, got, n, ref, given)
		}
	})
}

// genNodes draws a valid Nodes with arbitrary placement and host names.
func genNodes(t *rapid.T) Nodes {
	size := rapid.IntRange(1, 40).Draw(t, "size")
	maxNodes := rapid.IntRange(1, size).Draw(t, "maxNodes")
	raw := rapid.SliceOfN(rapid.IntRange(0, maxNodes-1), size, size).Draw(t, "raw")
	keys := make([]string, size)
	for r, k := range raw {
		keys[r] = "h" + string(rune('a'+k))
	}
	return group(keys)
}

func genList(t *rapid.T, n Nodes) []hints.ConfigEntry {
	hosts := append(slices.Clone(n.Names), hints.AnyHost, "nosuch")
	count := rapid.IntRange(0, 4).Draw(t, "entries")
	l := make([]hints.ConfigEntry, count)
	for i := range l {
		l[i].Host = rapid.SampledFrom(hosts).Draw(t, "host")
		l[i].Count = rapid.OneOf(rapid.Just(hints.AllProcs), rapid.IntRange(1, 5)).Draw(t, "count")
	}
	return l
}

// matches is how many ranks the list selects without a cap.
func matches(n Nodes, l []hints.ConfigEntry) int {
	if len(l) == 0 {
		l = defaultList
	}
	total := 0
	for k, m := range n.members() {
		asked := 0
		for _, e := range l {
			if e.Host == hints.AnyHost || e.Host == n.Names[k] {
				if e.Count == hints.AllProcs {
					asked = len(m)
				} else {
					asked += e.Count
				}
			}
		}
		total += min(asked, len(m))
	}
	return total
}

func TestAggregatorsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := genNodes(t)
		l := genList(t, n)
		cbNodes := rapid.IntRange(-1, len(n.Of)+3).Draw(t, "cbNodes")
		aggs, warn := Aggregators(n, cbNodes, l)

		limit := len(n.Of)
		if cbNodes > 0 {
			limit = min(limit, cbNodes)
		}
		want := matches(n, l)
		if want == 0 {
			if warn == "" {
				t.Fatalf("no warning for a list matching nothing")
			}
			want = n.Count()
		} else if warn != "" {
			t.Fatalf("unexpected warning %q", warn)
		}
		if len(aggs) != min(limit, want) {
			t.Fatalf("%d aggregators, want min(%d, %d): %v", len(aggs), limit, want, aggs)
		}
		seen := make(map[int]bool)
		for _, a := range aggs {
			if a < 0 || a >= len(n.Of) || seen[a] {
				t.Fatalf("bad or repeated rank %d in %v", a, aggs)
			}
			seen[a] = true
		}
		// Node-round-robin: the j-th aggregator of a node comes after the
		// (j-1)-th of every node that has one.
		round := make([]int, n.Count())
		lastRound, lastNode := -1, -1
		for _, a := range aggs {
			k := n.Of[a]
			r := round[k]
			round[k]++
			if r < lastRound || (r == lastRound && k <= lastNode) {
				t.Fatalf("not node-round-robin: %v", aggs)
			}
			lastRound, lastNode = r, k
		}
		// Within a node, the aggregators are spread evenly.
		for k, m := range n.members() {
			var got []int
			for _, a := range aggs {
				if n.Of[a] == k {
					got = append(got, a)
				}
			}
			var want []int
			for _, p := range spread(len(m), len(got)) {
				want = append(want, m[p])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("node %d aggregators %v, want %v", k, got, want)
			}
		}
		again, warn2 := Aggregators(n, cbNodes, slices.Clone(l))
		if !slices.Equal(aggs, again) || warn != warn2 {
			t.Fatalf("not deterministic")
		}
	})
}
