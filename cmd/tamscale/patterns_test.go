package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every pattern covers its file exactly once, each rank's blocks sorted,
// merged and non-empty.
func TestPatternsTileTheFile(t *testing.T) {
	sz := patternSizes{e3smCells: 16, e3smSeg: 3, e3smLev: 2, e3smVars: 2, e3smStride: 8, seed: 7, btioN: 16, s3dN: 16}
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
	require.Equal(t, [3]int{8, 8, 4}, dims3(256))
	require.Equal(t, [3]int{16, 8, 8}, dims3(1024))
	require.Equal(t, [3]int{16, 16, 16}, dims3(4096))
	require.Equal(t, [3]int{3, 2, 2}, dims3(12))
	require.Equal(t, [3]int{7, 1, 1}, dims3(7))
}

// A small end-to-end run: TAM's own piece count agrees with the plan
// (measure checks it) and global aggregators hear from fewer ranks.
func TestSmallRun(t *testing.T) {
	o, err := parseFlags([]string{"-ranks", "64", "-nodes", "4", "-local", "2", "-btio-n", "16", "-s3d-n", "16", "-e3sm-cells", "8"})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, run(o, &out))
	lines := strings.Split(out.String(), "\n")
	require.GreaterOrEqual(t, len(lines), 2+6)
	for _, pt := range []string{"E3SM", "BTIO", "S3D"} {
		var tp, tm row
		for _, l := range lines {
			if !strings.HasPrefix(l, "| "+pt+" ") {
				continue
			}
			f := strings.Split(l, "|")
			r := row{strategy: strings.TrimSpace(f[4])}
			r.gaMax = atoi(t, f[8])
			r.before, r.after = atoi(t, f[14]), atoi(t, f[15])
			if r.strategy == "twophase" {
				tp = r
			} else {
				tm = r
			}
		}
		require.Less(t, tm.gaMax, tp.gaMax, pt)
		require.Equal(t, tp.before, tm.before, pt)
		require.Less(t, tm.after, tm.before, pt)
	}
}

func atoi(t *testing.T, s string) int64 {
	var v int64
	for _, c := range strings.TrimSpace(s) {
		require.True(t, c >= '0' && c <= '9', "not a number: %q", s)
		v = 10*v + int64(c-'0')
	}
	return v
}
