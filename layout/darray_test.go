package layout

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every byte of the global array belongs to exactly one rank.
func TestDarrayPiecesTileTheArray(t *testing.T) {
	type cfg struct {
		gsizes   []int
		distribs []Distrib
		dargs    []int
		psizes   []int
	}
	D, B, C, N := DargDefault, DistribBlock, DistribCyclic, DistribNone
	cfgs := []cfg{
		{[]int{10}, []Distrib{B}, []int{D}, []int{3}},
		{[]int{10}, []Distrib{C}, []int{D}, []int{4}},
		{[]int{11}, []Distrib{C}, []int{3}, []int{2}},
		{[]int{9, 7}, []Distrib{B, C}, []int{D, 2}, []int{2, 3}},
		{[]int{8, 5}, []Distrib{C, N}, []int{D, D}, []int{3, 1}},
		{[]int{5, 6, 7}, []Distrib{B, B, C}, []int{3, D, 2}, []int{2, 2, 2}},
		{[]int{4, 6, 3}, []Distrib{N, C, B}, []int{D, 4, 2}, []int{1, 2, 2}},
		{[]int{2, 2}, []Distrib{B, C}, []int{D, D}, []int{4, 3}}, // more processes than elements
	}
	for _, c := range cfgs {
		for _, order := range []Order{OrderC, OrderFortran} {
			t.Run(fmt.Sprintf("%v/%v/%v/%v/order%d", c.gsizes, c.distribs, c.dargs, c.psizes, order), func(t *testing.T) {
				size := int(product(c.psizes))
				total := product(c.gsizes) * 2
				owner := make([]int, total)
				for i := range owner {
					owner[i] = -1
				}
				var sum int64
				for rank := range size {
					typ, err := Darray(size, rank, c.gsizes, c.distribs, c.dargs, c.psizes, order, Int16)
					require.NoError(t, err)
					require.Equal(t, int64(0), typ.LB())
					require.Equal(t, total, typ.Extent())
					require.NoError(t, typ.CheckFiletype())
					sum += typ.Size()
					for off, n := range typ.Blocks() {
						for b := off; b < off+n; b++ {
							require.Equal(t, -1, owner[b], "byte %d owned by ranks %d and %d", b, owner[b], rank)
							owner[b] = rank
						}
					}
				}
				require.Equal(t, total, sum)
				for b, r := range owner {
					require.NotEqual(t, -1, r, "byte %d has no owner", b)
				}
			})
		}
	}
}

func TestDarrayBlockHandChecked(t *testing.T) {
	// 10 ints over 3 processes, BLOCK: ceil(10/3) = 4, so 4, 4, 2 elements.
	for rank, want := range [][]ent{{{0, 16}}, {{16, 16}}, {{32, 8}}} {
		typ, err := Darray(3, rank, []int{10}, []Distrib{DistribBlock}, []int{DargDefault}, []int{3}, OrderC, Int32)
		require.NoError(t, err)
		require.Equal(t, want, collect(typ))
	}
	// CYCLIC(2) over 3 processes of 11 elements: rank 2 has 4,5 and 10.
	typ, err := Darray(3, 2, []int{11}, []Distrib{DistribCyclic}, []int{2}, []int{3}, OrderC, Byte)
	require.NoError(t, err)
	require.Equal(t, []ent{{4, 2}, {10, 1}}, collect(typ))
}
