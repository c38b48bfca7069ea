package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDimsCreate(t *testing.T) {
	for n, want := range map[int][3]int{1: {1, 1, 1}, 2: {2, 1, 1}, 3: {3, 1, 1}, 4: {2, 2, 1}, 6: {3, 2, 1}, 8: {2, 2, 2}, 12: {3, 2, 2}} {
		require.Equal(t, want, dimsCreate(n), "n=%d", n)
	}
}

// The blocks of all ranks tile the global array exactly once, for grids
// that do not divide the array evenly.
func TestDecomposeTiles(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 7} {
		g := [3]int{7, 5, 6}
		p := dimsCreate(n)
		seen := make([]int, g[0]*g[1]*g[2])
		for r := 0; r < n; r++ {
			b, err := decompose(g, p, r)
			require.NoError(t, err)
			buf := make([]int32, b.elements())
			b.fill(g, buf)
			for _, v := range buf {
				seen[v]++
			}
			bad, _ := b.verify(g, buf)
			require.Zero(t, bad)
		}
		for i, c := range seen {
			require.Equal(t, 1, c, "n=%d element %d", n, i)
		}
	}
	_, err := decompose([3]int{4, 4, 4}, [3]int{2, 2, 1}, 4)
	require.Error(t, err)
}
