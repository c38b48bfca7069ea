package coll

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// drawLists draws k sorted lists of pieces in [0, 400), overlapping each
// other or not, some of them empty.
func drawLists(t *rapid.T, k int) [][]Extent {
	lists := make([][]Extent, k)
	for s := range lists {
		var off int64
		for p := rapid.IntRange(0, 8).Draw(t, "pieces"); p > 0; p-- {
			off += rapid.Int64Range(0, 20).Draw(t, "gap")
			n := rapid.Int64Range(1, 20).Draw(t, "n")
			lists[s] = append(lists[s], Extent{off, n})
			off += n
		}
	}
	return lists
}

// Merge gives what a stable sort by (offset, source) of all pieces gives,
// each with its data position: the source's start plus its earlier
// pieces' bytes.
func TestMergeIsStableSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lists := drawLists(t, rapid.IntRange(0, 7).Draw(t, "sources"))
		starts := make([]int64, len(lists))
		var want []Entry
		for s, l := range lists {
			starts[s] = rapid.Int64Range(0, 1000).Draw(t, "start")
			at := starts[s]
			for _, x := range l {
				want = append(want, Entry{Off: x.Off, N: x.N, Src: s, At: at})
				at += x.N
			}
		}
		slices.SortStableFunc(want, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Off, b.Off), cmp.Compare(a.Src, b.Src)) })
		got := Merge(lists, starts, nil)
		if len(want) == 0 {
			require.Empty(t, got)
			return
		}
		require.Equal(t, want, got)
	})
}

// Taking pieces in parts walks the same bytes in the same order as taking
// them whole, each part inside its piece (idx) and at most the limit.
func TestTakeInParts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lists := drawLists(t, rapid.IntRange(0, 7).Draw(t, "sources"))
		whole := Merge(lists, nil, nil)
		var m Merger
		m.Reset(lists, nil)
		var byte0 []int64 // (offset, source) of every byte, in merged order
		var starts []int64
		for m.Len() > 0 {
			limit := rapid.Int64Range(1, 25).Draw(t, "limit")
			off, ok := m.Peek()
			require.True(t, ok)
			e, idx := m.Take(limit)
			require.Equal(t, off, e.Off)
			starts = append(starts, e.Off)
			require.LessOrEqual(t, e.N, limit)
			p := lists[e.Src][idx]
			require.True(t, p.Off <= e.Off && e.End() <= p.End(), "part %+v outside piece %+v", e, p)
			for b := e.Off; b < e.End(); b++ {
				byte0 = append(byte0, b, int64(e.Src))
			}
		}
		_, ok := m.Peek()
		require.False(t, ok)
		var want []int64
		for _, e := range whole {
			for b := e.Off; b < e.End(); b++ {
				want = append(want, b, int64(e.Src))
			}
		}
		// All bytes are there, each source's in order, and parts start
		// in file order (a part may run past another source's start).
		require.ElementsMatch(t, want, byte0)
		for s := range lists {
			var a, b []int64
			for i := 0; i < len(want); i += 2 {
				if want[i+1] == int64(s) {
					a = append(a, want[i])
				}
				if byte0[i+1] == int64(s) {
					b = append(b, byte0[i])
				}
			}
			require.Equal(t, a, b, "source %d", s)
		}
		require.True(t, slices.IsSorted(starts), "parts out of file order: %v", starts)
	})
}
