package segment

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestGroupsExamples(t *testing.T) {
	g, l := Groups(8, []int{0, 2, 4, 6})
	require.Equal(t, []int{0, 0, 1, 1, 2, 2, 3, 3}, g)
	require.Equal(t, []int{0, 2, 4, 6}, l)

	// Aggregators last in their blocks, given out of order.
	g, l = Groups(8, []int{7, 3})
	require.Equal(t, []int{0, 0, 0, 0, 1, 1, 1, 1}, g)
	require.Equal(t, []int{3, 7}, l)

	// Bunched aggregators: the clamp keeps each inside its group.
	g, l = Groups(8, []int{1, 0})
	require.Equal(t, []int{0, 1, 1, 1, 1, 1, 1, 1}, g)
	require.Equal(t, []int{0, 1}, l)

	g, l = Groups(5, []int{3})
	require.Equal(t, []int{0, 0, 0, 0, 0}, g)
	require.Equal(t, []int{3}, l)

	require.Panics(t, func() { Groups(4, nil) })
	require.Panics(t, func() { Groups(4, []int{1, 1}) })
	require.Panics(t, func() { Groups(4, []int{4}) })
}

func TestGroupsProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		k := rapid.IntRange(1, n).Draw(rt, "k")
		var aggs []int
		if rapid.Bool().Draw(rt, "even") {
			for i := range k {
				aggs = append(aggs, i*n/k)
			}
		} else {
			aggs = rapid.Permutation(seq(n)).Draw(rt, "perm")[:k]
		}
		group, leader := Groups(n, aggs)
		require.Len(rt, group, n)
		require.Equal(rt, slices.Sorted(slices.Values(aggs)), leader)
		// Consecutive, non-empty, numbered in rank order.
		require.Equal(rt, 0, group[0])
		require.Equal(rt, k-1, group[n-1])
		for r := 1; r < n; r++ {
			d := group[r] - group[r-1]
			require.True(rt, d == 0 || d == 1, "groups not consecutive at rank %d", r)
		}
		// Each leader leads its own group.
		for g, a := range leader {
			require.Equal(rt, g, group[a])
		}
		// Evenly spaced aggregators give the even blocks.
		if slices.Equal(aggs, evenAggs(n, k)) {
			for r := range n {
				require.Equal(rt, group[r], groupOfEven(r, n, k), "rank %d", r)
			}
		}
	})
}

func evenAggs(n, k int) []int {
	a := make([]int, k)
	for i := range a {
		a[i] = i * n / k
	}
	return a
}

// groupOfEven is the block of [i*n/k, (i+1)*n/k) holding r.
func groupOfEven(r, n, k int) int {
	for g := range k {
		if r < (g+1)*n/k {
			return g
		}
	}
	return k - 1
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
