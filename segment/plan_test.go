package segment

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/collio/collio/internal/coll"
)

// drawLists draws k sorted, disjoint piece lists in [0, 300): members'
// views, overlapping each other or not.
func drawLists(rt *rapid.T, k int) [][]coll.Extent {
	lists := make([][]coll.Extent, k)
	for m := range lists {
		pos := int64(rapid.IntRange(0, 40).Draw(rt, "start"))
		for range rapid.IntRange(0, 6).Draw(rt, "pieces") {
			n := int64(rapid.IntRange(1, 30).Draw(rt, "n"))
			lists[m] = append(lists[m], coll.Extent{Off: pos, N: n})
			pos += n + int64(rapid.IntRange(1, 25).Draw(rt, "gap"))
		}
	}
	return lists
}

// bytesOf expands a list into its file offsets and hidden flags (hide
// nil: none hidden).
func bytesOf(l []coll.Extent, hide []bool) (offs []int64, hidden []bool) {
	for k, p := range l {
		for i := range p.N {
			offs = append(offs, p.Off+i)
			hidden = append(hidden, hide != nil && hide[k])
		}
	}
	return offs, hidden
}

// Every byte is visible in exactly the highest member covering it; the
// lists keep their bytes in order.
func TestHideOverlaps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		lists := drawLists(rt, k)
		orig := make([][]coll.Extent, k)
		winner := map[int64]int{}
		for m, l := range lists {
			orig[m] = slices.Clone(l)
			offs, _ := bytesOf(l, nil)
			for _, o := range offs {
				winner[o] = m // ascending m: the highest wins
			}
		}
		hide := hideOverlaps(lists)
		overlap := hide != nil
		sawHidden := false
		for m := range lists {
			var h []bool
			if hide != nil {
				require.Len(rt, hide[m], len(lists[m]))
				h = hide[m]
			}
			o1, _ := bytesOf(orig[m], nil)
			o2, hid := bytesOf(lists[m], h)
			require.Equal(rt, o1, o2, "member %d bytes changed", m)
			for i, o := range o2 {
				require.Equal(rt, winner[o] != m, hid[i], "member %d byte %d", m, o)
				sawHidden = sawHidden || hid[i]
			}
			for i := 1; i < len(lists[m]); i++ {
				require.LessOrEqual(rt, lists[m][i-1].End(), lists[m][i].Off)
			}
		}
		require.Equal(rt, sawHidden, overlap)
	})
}

// replay runs a planner and checks the cycles: each member's bytes come in
// its own order with consecutive chunk positions, segments sorted by
// offset; it returns the per-cycle counts.
func replay(rt *rapid.T, p planner, lists [][]coll.Extent, cycles int64) [][]int64 {
	k := len(lists)
	cy := &cycle{counts: make([]int64, k), chunks: make([][]byte, k)}
	got := make([][]int64, k)
	var out [][]int64
	for range cycles {
		p.plan(cy)
		require.True(rt, slices.IsSortedFunc(cy.segs, func(a, b seg) int { return cmp.Compare(a.off, b.off) }))
		at := make([]int64, k)
		for _, s := range cy.segs {
			require.Equal(rt, at[s.m], s.at, "chunk position")
			at[s.m] += s.n
			for i := range s.n {
				got[s.m] = append(got[s.m], s.off+i)
			}
		}
		require.Equal(rt, cy.counts, at)
		out = append(out, slices.Clone(cy.counts))
	}
	for m, l := range lists {
		want, _ := bytesOf(l, nil)
		require.Equal(rt, want, got[m], "member %d", m)
	}
	return out
}

func TestDynamicPlan(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		lists := drawLists(rt, k)
		budget := rapid.Int64Range(1, 80).Draw(rt, "budget")
		totals := make([]int64, k)
		var total int64
		for m, l := range lists {
			for _, p := range l {
				totals[m] += p.N
			}
			total += totals[m]
		}
		cycles := dynamicCycles(totals, budget)
		counts := replay(rt, newDynamicPlan(lists, nil, budget), lists, cycles)
		for c, cs := range counts {
			var sum int64
			for _, x := range cs {
				sum += x
			}
			if c < len(counts)-1 {
				require.Equal(rt, budget, sum, "cycle %d not full", c)
			} else {
				require.Equal(rt, total-budget*int64(c), sum)
			}
		}
	})
}

func TestStaticPlan(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		lists := drawLists(rt, k)
		share := rapid.Int64Range(1, 40).Draw(rt, "share")
		totals := make([]int64, k)
		for m, l := range lists {
			for _, p := range l {
				totals[m] += p.N
			}
		}
		cycles := staticCycles(totals, share)
		p := &staticPlan{lists: lists, next: make([]int, k), used: make([]int64, k), share: share}
		counts := replay(rt, p, lists, cycles)
		for c, cs := range counts {
			for m, x := range cs {
				require.Equal(rt, min(share, max(0, totals[m]-int64(c)*share)), x)
			}
		}
	})
}
