package layout

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// blocksOf lists a type's merged blocks.
func blockList(t *Type) [][2]int64 {
	var out [][2]int64
	for off, n := range t.Blocks() {
		out = append(out, [2]int64{off, n})
	}
	return out
}

// The direct list of many irregular blocks is the type the general path
// builds: same blocks, bounds and size; regular runs still fold.
func TestHIndexedDirectList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		elem    *Type
		regular bool
	}{
		{"bytes", Byte, false},
		{"int32", Bytes(4), false},
		{"regular", Byte, true},
	} {
		n := 5000
		lens := make([]int, n)
		displs := make([]int64, n)
		off := int64(0)
		for i := range lens {
			lens[i] = 1 + rng.IntN(8)
			gap := int64(rng.IntN(3)) * 8 // some blocks touch: they merge
			if tc.regular {
				lens[i], gap = 3, 5
			}
			if i%97 == 0 && !tc.regular {
				lens[i] = 0
			}
			displs[i] = off + gap
			off = displs[i] + int64(lens[i])*tc.elem.Extent()
		}
		got, err := HIndexed(lens, displs, tc.elem)
		require.NoError(t, err, tc.name)
		types := make([]*Type, n)
		for i := range types {
			types[i] = tc.elem
		}
		var b builder
		var bd bounds
		var items []node
		for i, l := range lens {
			if l > 0 {
				items = append(items, b.repeat(displs[i], int64(l), tc.elem.Extent(), tc.elem.root))
				bd.place(&b.checker, tc.elem, displs[i], displs[i]+int64(l-1)*tc.elem.Extent())
			}
		}
		want, err := newType("hindexed", &b, b.seq(items), bd)
		require.NoError(t, err)
		require.Equal(t, blockList(want), blockList(got), tc.name)
		require.Equal(t, [3]int64{want.Size(), want.LB(), want.UB()}, [3]int64{got.Size(), got.LB(), got.UB()}, tc.name)
		require.Equal(t, want.NumBlocks(), got.NumBlocks(), tc.name)
		if tc.regular {
			require.Less(t, got.Footprint(), 1000, "a regular pattern stays a repeat")
		} else {
			_, isList := got.root.(*listNode)
			require.True(t, isList, "irregular blocks make one list")
			// Straight into the list: no node per block on the way.
			allocs := testing.AllocsPerRun(1, func() { HIndexed(lens, displs, tc.elem) })
			require.Less(t, allocs, 20.0, "%s: allocations for %d blocks", tc.name, n)
		}
	}
}

// The direct path's plain arithmetic is only taken where no sum can
// overflow: blocks out near the int64 limit go the general, checked way,
// which builds them when they fit and reports the overflow when not.
func TestHIndexedNearTheLimit(t *testing.T) {
	n := 2 * directMin
	lens := make([]int, n)
	displs := make([]int64, n)
	for i := range lens {
		lens[i] = 2 + i%3
		displs[i] = int64(i) * 16
	}
	plain, err := HIndexed(lens, displs, Byte)
	require.NoError(t, err)
	_, isList := plain.root.(*listNode)
	require.True(t, isList, "the direct list")

	far := slices.Clone(displs)
	for i := range far {
		far[i] += 1<<62 + 1<<61
	}
	got, err := HIndexed(lens, far, Byte)
	require.NoError(t, err, "fits in 64 bits")
	require.Equal(t, plain.Size(), got.Size())
	require.Equal(t, plain.LB()+far[0], got.LB())
	require.Equal(t, plain.UB()+far[0], got.UB())
	require.Equal(t, blockList(plain)[3][1], blockList(got)[3][1])

	blk := Byte.root.(*blockNode)
	require.True(t, plainFits(lens, displs, blk, Byte))
	require.False(t, plainFits(lens, far, blk, Byte), "past 2^62: checked")
	huge := slices.Clone(lens)
	huge[0] = math.MaxInt32
	require.True(t, plainFits(huge, displs, blk, Byte))
	require.False(t, plainFits(huge, displs, Bytes(1<<32).root.(*blockNode), Bytes(1<<32)), "2^31 blocks of 4 GiB")

	over := slices.Clone(far)
	over[n-1] = math.MaxInt64 - 1
	_, err = HIndexed(lens, over, Byte)
	require.ErrorContains(t, err, "overflow", "the last block ends past 2^63")
}

func TestRegularRun(t *testing.T) {
	mk := func(blocks ...[2]int64) ([]int64, []int64) {
		offs, prefix := []int64{}, []int64{0}
		for _, b := range blocks {
			offs = append(offs, b[0])
			prefix = append(prefix, prefix[len(prefix)-1]+b[1])
		}
		return offs, prefix
	}
	var run [][2]int64
	for i := range minBlockRun {
		run = append(run, [2]int64{int64(10 * i), 2})
	}
	require.True(t, regularRun(mk(run...)))
	require.False(t, regularRun(mk(run[1:]...)))
	broken := slices.Clone(run)
	broken[4][0]++
	require.False(t, regularRun(mk(broken...)))
	// A run may start after an odd block.
	require.True(t, regularRun(mk(append([][2]int64{{-50, 7}}, run...)...)))
}

// An E3SM-sized flush: half a million irregular blocks of bytes.
func BenchmarkHIndexedIrregular(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 500000
	lens := make([]int, n)
	displs := make([]int64, n)
	off := int64(0)
	for i := range lens {
		lens[i] = 8 + rng.IntN(57)
		displs[i] = off + int64(rng.IntN(4))*16
		off = displs[i] + int64(lens[i])
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := HIndexed(lens, displs, Byte); err != nil {
			b.Fatal(err)
		}
	}
}
