//go:build cgo

package main

import (
	"testing"

	"github.com/collio/collio/internal/benchutil"
	"github.com/stretchr/testify/require"
)

func smallSizes() sizes {
	return sizes{
		flashBlock: 4, flashGuard: 2, flashVars: 3, flashBlocks: 2,
		btioN: 7, btioSteps: 3,
		e3smCols: 97, e3smLev: 3, e3sm2D: 2, e3sm3D: 2, e3smRun: 3, e3smHoles: 0.1, e3smSeed: 7,
		s3d: [3]int{5, 4, 3}, s3dSpecies: 2,
	}
}

// elems expands the blocks of a collio type placed at byte base into
// float64 element indices, in typemap order.
func elems(t *testing.T, typ benchutil.Type, base int64, out []int64) []int64 {
	for off, n := range typ.C.Blocks() {
		require.Zero(t, (base+off)%8, "block at %d not float64-aligned", base+off)
		require.Zero(t, n%8)
		for b := base + off; b < base+off+n; b += 8 {
			out = append(out, b/8)
		}
	}
	return out
}

// callPairs is what collio's types say call k moves: (buffer element,
// file element) pairs in order.
func callPairs(t *testing.T, v view, c call) [][2]int64 {
	esize := v.etype.C.Size()
	n := c.size / 8
	// File side: the view's data from offset c.off etypes.
	skip := c.off * esize / 8
	var file []int64
	for tile := int64(0); int64(len(file)) < skip+n; tile++ {
		file = elems(t, v.filetype, v.disp+tile*v.filetype.C.Extent(), file)
	}
	file = file[skip : skip+n]
	// Memory side.
	var mem []int64
	if c.mem == nil {
		for i := range n {
			mem = append(mem, i)
		}
	} else {
		for i := range c.count {
			mem = elems(t, *c.mem, int64(i)*c.mem.C.Extent(), mem)
		}
	}
	require.Len(t, mem, int(n))
	out := make([][2]int64, n)
	for i := range out {
		out[i] = [2]int64{mem[i], file[i]}
	}
	return out
}

// The datatypes each pattern builds move exactly the elements its each
// function lists, in the same order; the ranks together cover every file
// element of the pattern once (e3sm: except the holes) and write bytes()
// bytes; buffers stay inside bufLen.
func TestPatternsTypesMatchMapping(t *testing.T) {
	for _, name := range []string{"flash", "btio", "e3sm", "s3d"} {
		for _, np := range []int{1, 4, 9, 6} {
			if name == "btio" && np == 6 {
				continue
			}
			seen := map[int64]int{}
			var total int64
			for r := range np {
				p, err := newPattern(name, r, np, smallSizes())
				require.NoError(t, err, "%s np=%d", name, np)
				var types benchutil.Types
				v, calls, err := p.plan(&types)
				require.NoError(t, err, "%s np=%d rank %d", name, np, r)
				require.NoError(t, v.filetype.C.CheckFiletype(), name)
				require.Len(t, calls, p.calls())
				usedMem := map[int64]bool{}
				for k, c := range calls {
					want := callPairs(t, v, c)
					var got [][2]int64
					p.each(k, func(mem int, file int64) { got = append(got, [2]int64{int64(mem), file}) })
					require.Len(t, got, len(want))
					for i := range want {
						if want[i] != got[i] {
							t.Fatalf("%s np=%d rank %d call %d element %d: types say (mem %d, file %d), each says (mem %d, file %d)",
								name, np, r, k, i, want[i][0], want[i][1], got[i][0], got[i][1])
						}
					}
					for _, g := range got {
						require.Less(t, g[0], int64(p.bufLen()), name)
						seen[g[1]]++
						if name != "btio" { // btio reuses its buffer every step
							require.False(t, usedMem[g[0]], "%s: buffer element %d used twice", name, g[0])
							usedMem[g[0]] = true
						}
					}
					total += c.size
				}
			}
			require.Equal(t, total, mustPattern(t, name, np).bytes(), "%s np=%d", name, np)
			for e, n := range seen {
				if n != 1 {
					t.Fatalf("%s np=%d: file element %d written %d times", name, np, e, n)
				}
			}
			require.Equal(t, int(total/8), len(seen))
			if name != "e3sm" {
				// No holes: the elements are 0 .. n-1.
				for i := range int64(len(seen)) {
					if seen[i] != 1 {
						t.Fatalf("%s np=%d: file element %d not covered", name, np, i)
					}
				}
			}
		}
	}
}

func mustPattern(t *testing.T, name string, np int) pattern {
	p, err := newPattern(name, 0, np, smallSizes())
	require.NoError(t, err)
	return p
}

func TestBTIONeedsSquare(t *testing.T) {
	_, err := newPattern("btio", 0, 6, smallSizes())
	require.ErrorContains(t, err, "square number of ranks")
}

// BTIO's multi-partition: a rank owns one cell in every slab of every
// direction.
func TestBTIOMultipartition(t *testing.T) {
	sz := smallSizes()
	sz.btioN = 9
	for r := range 9 {
		p, err := newBTIO(r, 9, sz)
		require.NoError(t, err)
		for d := range 3 {
			starts := map[int]bool{}
			for _, c := range p.cells {
				starts[c[0][d]] = true
			}
			require.Len(t, starts, 3, "rank %d dim %d", r, d)
		}
	}
}

// The decomposition map: deterministic, balanced within one run per rank,
// the documented mean run length and hole fraction (roughly).
func TestE3SMMap(t *testing.T) {
	runs, owner := genMap(200000, 8, 8, 0.05, 1)
	runs2, owner2 := genMap(200000, 8, 8, 0.05, 1)
	require.Equal(t, runs, runs2)
	require.Equal(t, owner, owner2)
	per := make([]int, 8)
	holes := 0
	next := 0
	for i, r := range runs {
		require.Equal(t, next, r.start)
		require.GreaterOrEqual(t, r.n, 1)
		require.LessOrEqual(t, r.n, 32)
		next += r.n
		if owner[i] < 0 {
			holes++
		} else {
			per[owner[i]]++
		}
	}
	require.Equal(t, 200000, next)
	require.LessOrEqual(t, slicesMax(per)-slicesMin(per), 1)
	mean := 200000.0 / float64(len(runs))
	require.InDelta(t, 8, mean, 0.5)
	require.InDelta(t, 0.05, float64(holes)/float64(len(runs)), 0.01)
	_, err := newE3SM(0, 64, sizes{e3smCols: 10, e3smLev: 1, e3sm2D: 1, e3smRun: 2, e3smSeed: 1})
	require.ErrorContains(t, err, "without columns")
}

func slicesMax(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func TestValue(t *testing.T) {
	require.NotEqual(t, value(5, 1), value(5, 2))
	require.NotEqual(t, value(5, 1), value(6, 1))
	require.NotEqual(t, uint64(sentinel), value(0, 0))
}
