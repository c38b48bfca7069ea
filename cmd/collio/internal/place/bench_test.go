package place

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every pattern covers its file exactly once, each rank's blocks sorted,
// merged and non-empty.
func TestPatternsTileTheFile(t *testing.T) {
	sz := Sizes{E3SMCells: 16, E3SMSeg: 3, E3SMLev: 2, E3SMVars: 2, E3SMStride: 8, Seed: 7, BTIOSide: 16, S3DSide: 16}
	for _, name := range []string{"e3sm", "btio", "s3d"} {
		for _, p := range []int{16, 64} {
			pt, err := makePattern(name, p, sz)
			require.NoError(t, err)
			seen := make([]int, pt.size)
			for r, bs := range pt.blocks {
				require.NotEmpty(t, bs, "%s rank %d", name, r)
				for k, b := range bs {
					require.Positive(t, b.n)
					if k > 0 {
						require.Greater(t, b.off, bs[k-1].off+bs[k-1].n, "%s rank %d: blocks not sorted or not merged", name, r)
					}
					for x := b.off; x < b.off+b.n; x++ {
						seen[x]++
					}
				}
			}
			for x, c := range seen {
				require.Equal(t, 1, c, "%s p=%d: byte %d written %d times", name, p, x, c)
			}
		}
	}
}

func TestDims3(t *testing.T) {
	require.Equal(t, [3]int{8, 8, 4}, Dims3(256))
	require.Equal(t, [3]int{16, 8, 8}, Dims3(1024))
	require.Equal(t, [3]int{16, 16, 16}, Dims3(4096))
	require.Equal(t, [3]int{3, 2, 2}, Dims3(12))
	require.Equal(t, [3]int{7, 1, 1}, Dims3(7))
}

// The views Bench builds hold exactly the pattern's blocks, and every
// benchmark's application matrix accounts for every byte of the file.
func TestBenchViewsAreTheBlocks(t *testing.T) {
	sz := Sizes{E3SMCells: 8, E3SMSeg: 2, E3SMLev: 2, E3SMVars: 1, E3SMStride: 4, Seed: 3, BTIOSide: 8, S3DSide: 8, CollPerfSide: 12}
	for _, name := range Benchmarks {
		acc, what, err := Bench(name, 16, sz)
		require.NoError(t, err, name)
		require.NotEmpty(t, what)
		require.Len(t, acc, 16)
		m, err := Build(acc, 3, Domains{})
		require.NoError(t, err, name)
		var want int64
		for _, a := range acc {
			want += a.Size
		}
		require.Equal(t, want, m.Total(), name)
		if name == "coll_perf" {
			require.Equal(t, int64(12*12*12*4), want)
			continue
		}
		pt, err := makePattern(name, 16, sz)
		require.NoError(t, err)
		require.Equal(t, pt.size, want, name)
		for r, bs := range pt.blocks {
			rg, err := acc[r].Range()
			require.NoError(t, err)
			require.Equal(t, bs[0].off, rg.Start, "%s rank %d", name, r)
			require.Equal(t, bs[len(bs)-1].off+bs[len(bs)-1].n, rg.End, "%s rank %d", name, r)
		}
	}
}

func TestBenchBadInput(t *testing.T) {
	sz := DefaultSizes()
	_, _, err := Bench("btio", 8, sz)
	require.ErrorContains(t, err, "btio needs a square number of ranks, not 8")
	_, _, err = Bench("s3d", 27, sz)
	require.ErrorContains(t, err, "mesh side 64 not divisible by the process grid 3x3x3")
	_, _, err = Bench("nope", 4, sz)
	require.ErrorContains(t, err, `unknown pattern "nope"`)
	_, _, err = Bench("e3sm", 0, sz)
	require.ErrorContains(t, err, "0 ranks")
	sz.E3SMSeg = 0.5
	_, _, err = Bench("e3sm", 4, sz)
	require.ErrorContains(t, err, "mean segment")
}
