package layout

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bigSubarray() (*Type, error) {
	return Subarray([]int{512, 512, 512}, []int{256, 256, 256}, []int{128, 128, 128}, OrderC, Float64)
}

func TestBigSubarrayIsCompact(t *testing.T) {
	typ, err := bigSubarray()
	require.NoError(t, err)
	assert.Equal(t, int64(256*256*256*8), typ.Size())
	assert.Equal(t, int64(256*256), typ.NumBlocks())
	assert.Less(t, typ.Footprint(), 4096, "%s", typ)

	allocs := testing.AllocsPerRun(10, func() { _, _ = bigSubarray() })
	assert.Less(t, allocs, 50.0, "allocations per construction")

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		_, _ = bigSubarray()
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	assert.Less(t, perRun, uint64(16<<10), "bytes allocated per construction")

	view := NewStream(typ, 0, -1)
	assert.Less(t, view.Footprint(), 8192, "a file view over it stays small")
}

// bigSubarrayOffset is the file offset of data byte p of the view, by hand.
func bigSubarrayOffset(p int64) (off, rowLeft int64) {
	const size, extent = 256 * 256 * 256 * 8, 512 * 512 * 512 * 8
	tile, in := p/size, p%size
	e, b := in/8, in%8
	i, j, k := e/(256*256), (e/256)%256, e%256
	off = tile*extent + (((i+128)*512+(j+128))*512+(k+128))*8 + b
	return off, (256-k)*8 - b
}

func TestBigSubarrayViewSeek(t *testing.T) {
	typ, err := bigSubarray()
	require.NoError(t, err)
	s := NewStream(typ, 0, -1)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		p := rng.Int64N(5 * typ.Size())
		require.NoError(t, s.SeekData(p))
		off, n, ok := s.Next(0)
		require.True(t, ok)
		wantOff, wantN := bigSubarrayOffset(p)
		require.Equal(t, [2]int64{wantOff, wantN}, [2]int64{off, n}, "position %d", p)
		require.Equal(t, p+n, s.Pos())
	}
}

func TestSeekIsIndependentOfBlockCount(t *testing.T) {
	// 2^30 one-byte blocks; an O(blocks) Seek would make this test hang.
	v, err := Vector(1<<30, 1, 2, Byte)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), v.NumBlocks())
	s := NewStream(v, 0, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		p := rng.Int64N(1 << 30)
		require.NoError(t, s.SeekData(p))
		off, n, ok := s.Next(100)
		require.True(t, ok)
		require.Equal(t, [2]int64{2 * p, 1}, [2]int64{off, n})
	}

	// Irregular blocks (a real seq) repeated 2^20 times: 2^30 blocks again.
	const width = 1024
	lens, displs := make([]int, width), make([]int, width)
	var prefix []int64 // data bytes before block i
	pos := 0
	var total int64
	for i := range width {
		lens[i] = 1 + rng.IntN(3)
		displs[i] = pos
		pos += lens[i] + 1 + rng.IntN(5)
		prefix = append(prefix, total)
		total += int64(lens[i])
	}
	ind, err := Indexed(lens, displs, Int32)
	require.NoError(t, err)
	ind, err = Resized(ind, 0, ind.Extent()+4) // a gap, so tiles do not merge
	require.NoError(t, err)
	big, err := Contiguous(1<<20, ind)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), big.NumBlocks())
	s = NewStream(big, 1000, 1)
	for range 10000 {
		p := rng.Int64N(big.Size())
		require.NoError(t, s.SeekData(p))
		off, n, ok := s.Next(0)
		require.True(t, ok)
		tile, in := p/(total*4), (p%(total*4))/4
		blk := 0
		for blk+1 < width && prefix[blk+1] <= in {
			blk++
		}
		within := (in-prefix[blk])*4 + p%4
		wantOff := 1000 + tile*ind.Extent() + int64(displs[blk])*4 + within
		require.Equal(t, [2]int64{wantOff, int64(lens[blk])*4 - within}, [2]int64{off, n}, "position %d", p)
	}
}

func TestBlocksStopsEarly(t *testing.T) {
	v, err := Vector(1<<40, 1, 2, Byte)
	require.NoError(t, err)
	var got []ent
	for off, n := range v.Blocks() {
		got = append(got, ent{off, n})
		if len(got) == 3 {
			break
		}
	}
	assert.Equal(t, []ent{{0, 1}, {2, 1}, {4, 1}}, got)
}

func TestIrregularIndexedCostsLittlePerBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 100000
	lens, displs := make([]int, n), make([]int, n)
	pos := 0
	for i := range n {
		lens[i] = 1 + rng.IntN(4)
		displs[i] = pos
		pos += lens[i] + 1 + rng.IntN(7)
	}
	typ, err := Indexed(lens, displs, Float64)
	require.NoError(t, err)
	require.Equal(t, int64(n), typ.NumBlocks())
	assert.Less(t, typ.Footprint(), 20*n, "irregular blocks are stored as arrays, not nodes")
	s := NewStream(typ, 0, 1)
	require.NoError(t, s.SeekData(typ.Size()-1))
	off, k, ok := s.Next(0)
	require.True(t, ok)
	assert.Equal(t, [2]int64{int64(displs[n-1]+lens[n-1])*8 - 1, 1}, [2]int64{off, k})
}

func TestInfiniteStreamOfHugeType(t *testing.T) {
	huge, err := Resized(Byte, 0, 1<<62)
	require.NoError(t, err)
	s := NewStream(huge, 0, -1)
	off, n, ok := s.Next(0)
	require.True(t, ok)
	assert.Equal(t, [2]int64{0, 1}, [2]int64{off, n})
}
