//go:build cgo

package main

import (
	"testing"

	"github.com/collio/collio/internal/benchutil"
	"github.com/stretchr/testify/require"
)

// The blocks of all ranks tile the global array exactly once, for grids
// that do not divide the array evenly.
func TestDecomposeTiles(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 7} {
		g := [3]int{7, 5, 6}
		p := benchutil.DimsCreate(n)
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
