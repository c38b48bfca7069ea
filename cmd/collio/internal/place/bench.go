package place

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/collio/collio/layout"
)

// Benchmarks lists the application patterns Bench knows, after the
// benchmarks of the TAM paper (Kang et al.) and ROMIO's coll_perf; they
// are described in testdata/patterns/README.md.
var Benchmarks = []string{"e3sm", "btio", "s3d", "coll_perf"}

// Sizes are the problem sizes of the benchmark patterns.
type Sizes struct {
	E3SMCells, E3SMLev, E3SMVars, E3SMStride int
	E3SMSeg                                  float64 // mean segment length, cells
	Seed                                     uint64  // of E3SM's decomposition
	BTIOSide, S3DSide, CollPerfSide          int
}

// DefaultSizes are small enough for thousands of in-memory ranks: the
// studies count messages and bytes, so a pattern's shape matters more
// than its size.
func DefaultSizes() Sizes {
	return Sizes{E3SMCells: 32, E3SMSeg: 3, E3SMLev: 4, E3SMVars: 2, E3SMStride: 16, Seed: 1,
		BTIOSide: 128, S3DSide: 64, CollPerfSide: 256}
}

// Bench returns every rank's access of benchmark pattern name at the
// given rank count, and a description.
func Bench(name string, ranks int, sz Sizes) ([]Access, string, error) {
	if ranks < 1 {
		return nil, "", fmt.Errorf("place: %s with %d ranks", name, ranks)
	}
	if name == "coll_perf" {
		if sz.CollPerfSide < 1 {
			return nil, "", fmt.Errorf("place: coll_perf array side %d", sz.CollPerfSide)
		}
		d := Dims3(ranks)
		g := Grid{Sizes: []int{sz.CollPerfSide, sz.CollPerfSide, sz.CollPerfSide}, Procs: d[:], Elem: 4}
		acc, err := g.Accesses()
		return acc, fmt.Sprintf("coll_perf %d^3 int32 on a %dx%dx%d grid", sz.CollPerfSide, d[0], d[1], d[2]), err
	}
	pt, err := makePattern(name, ranks, sz)
	if err != nil {
		return nil, "", err
	}
	acc, err := pt.accesses()
	return acc, pt.name, err
}

// accesses are the ranks' views of their blocks (hindexed, contiguous
// in memory).
func (pt *pattern) accesses() ([]Access, error) {
	acc := make([]Access, len(pt.blocks))
	for r, bs := range pt.blocks {
		lens := make([]int, len(bs))
		displs := make([]int64, len(bs))
		var size int64
		for i, b := range bs {
			lens[i], displs[i] = int(b.n), b.off
			size += b.n
		}
		ft, err := layout.HIndexed(lens, displs, layout.Byte)
		if err != nil {
			return nil, fmt.Errorf("place: %s rank %d: %w", pt.name, r, err)
		}
		acc[r] = Access{Filetype: ft, Size: size}
	}
	return acc, nil
}

// block is a contiguous run of file bytes [off, off+n) one rank writes.
type block struct{ off, n int64 }

// pattern gives every rank's blocks, sorted by offset, adjacent blocks
// merged (so that they are the pieces a file view yields).
type pattern struct {
	name   string
	blocks [][]block // per rank
	size   int64     // file bytes the pattern covers (its extent)
}

func makePattern(name string, p int, sz Sizes) (*pattern, error) {
	switch name {
	case "e3sm":
		if sz.E3SMSeg < 1 || sz.E3SMCells < 1 || sz.E3SMLev < 1 || sz.E3SMVars < 1 {
			return nil, fmt.Errorf("place: e3sm needs at least one cell per rank, level and variable, and a mean segment of at least 1 cell")
		}
		return e3sm(p, sz), nil
	case "btio":
		return btio(p, sz.BTIOSide)
	case "s3d":
		return s3d(p, sz.S3DSide)
	}
	return nil, fmt.Errorf("place: unknown pattern %q (want e3sm, btio, s3d or coll_perf)", name)
}

// finish sorts and merges every rank's blocks.
func finish(pt *pattern) *pattern {
	for r, bs := range pt.blocks {
		slices.SortFunc(bs, func(a, b block) int { return int(a.off - b.off) })
		out := bs[:0]
		for _, b := range bs {
			if k := len(out) - 1; k >= 0 && out[k].off+out[k].n == b.off {
				out[k].n += b.n
				continue
			}
			out = append(out, b)
		}
		pt.blocks[r] = out
	}
	return pt
}

// e3sm is an E3SM-like decomposition map (see testdata/patterns/README.md):
// ncells = p*cells cells numbered along a space-filling curve (SFC), rank r
// owning SFC positions [r*cells, (r+1)*cells). The SFC is cut into
// segments of 1 + Geometric lengths (mean seg cells), split at rank
// boundaries; the file stores segments ordered by (k mod stride, k div
// stride) for SFC segment k, so a rank's consecutive segments land in
// distant file regions while each segment's file neighbours come from the
// same or nearby ranks. Every variable has lev levels of ncells doubles.
func e3sm(p int, sz Sizes) *pattern {
	rng := rand.New(rand.NewPCG(sz.Seed, 0xE35))
	ncells := int64(p) * int64(sz.E3SMCells)
	type seg struct {
		start, n int64 // SFC positions
		rank     int
	}
	var segs []seg
	for pos := int64(0); pos < ncells; {
		n := int64(1)
		for rng.Float64() < 1-1/sz.E3SMSeg {
			n++
		}
		r := pos / int64(sz.E3SMCells)
		n = min(n, (r+1)*int64(sz.E3SMCells)-pos) // a segment stays on one rank
		segs = append(segs, seg{pos, n, int(r)})
		pos += n
	}
	stride := max(sz.E3SMStride, 1)
	order := make([]int, len(segs))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		if a%stride != b%stride {
			return a%stride - b%stride
		}
		return a/stride - b/stride
	})
	cellOff := make([]int64, len(segs)) // file cell index of each segment
	var at int64
	for _, k := range order {
		cellOff[k] = at
		at += segs[k].n
	}
	pt := &pattern{name: "E3SM", blocks: make([][]block, p)}
	const dbl = 8
	slab := ncells * dbl
	for v := 0; v < sz.E3SMVars; v++ {
		for l := 0; l < sz.E3SMLev; l++ {
			base := int64(v*sz.E3SMLev+l) * slab
			for k, s := range segs {
				pt.blocks[s.rank] = append(pt.blocks[s.rank], block{base + cellOff[k]*dbl, s.n * dbl})
			}
		}
	}
	pt.size = int64(sz.E3SMVars*sz.E3SMLev) * slab
	return finish(pt)
}

// btio is BTIO's diagonal multi-partitioning: p = q*q ranks, an n^3 array
// of 5 doubles per point (Fortran order: the 5 values, then x, y, z)
// divided into q^3 cells; rank (i, j) = i + q*j owns the q cells
// ((i+c) mod q, (j+c) mod q, c), c = 0..q-1, one per z slab.
func btio(p, n int) (*pattern, error) {
	q := 1
	for q*q < p {
		q++
	}
	if q*q != p {
		return nil, fmt.Errorf("place: btio needs a square number of ranks, not %d", p)
	}
	if n%q != 0 {
		return nil, fmt.Errorf("place: btio: array side %d is not a multiple of sqrt(ranks) = %d", n, q)
	}
	const rec = 5 * 8
	c := n / q // cell side
	N := int64(n)
	pt := &pattern{name: "BTIO", blocks: make([][]block, p), size: N * N * N * rec}
	for r := 0; r < p; r++ {
		i, j := r%q, r/q
		for k := 0; k < q; k++ {
			x0, y0, z0 := ((i+k)%q)*c, ((j+k)%q)*c, k*c
			for z := z0; z < z0+c; z++ {
				for y := y0; y < y0+c; y++ {
					off := ((int64(z)*N+int64(y))*N + int64(x0)) * rec
					pt.blocks[r] = append(pt.blocks[r], block{off, int64(c) * rec})
				}
			}
		}
	}
	return finish(pt), nil
}

// s3dVars are S3D-IO's checkpoint variables and their components: mass
// fractions (11), velocity (3), pressure, temperature.
var s3dVars = []int{11, 3, 1, 1}

// s3d is S3D-IO's checkpoint: an n^3 mesh partitioned block-block-block
// over a px*py*pz grid (as MPI_Dims_create), rank = x + px*(y + py*z);
// four variables, 4-D arrays (x fastest, then y, z, component), written
// one after the other, 8-byte doubles.
func s3d(p, n int) (*pattern, error) {
	d := Dims3(p)
	px, py, pz := d[0], d[1], d[2]
	if n%px != 0 || n%py != 0 || n%pz != 0 {
		return nil, fmt.Errorf("place: s3d: mesh side %d not divisible by the process grid %dx%dx%d", n, px, py, pz)
	}
	nx, ny, nz := n/px, n/py, n/pz
	N := int64(n)
	const dbl = 8
	pt := &pattern{name: "S3D", blocks: make([][]block, p)}
	var base int64
	for _, ncomp := range s3dVars {
		for r := 0; r < p; r++ {
			xi, yi, zi := r%px, (r/px)%py, r/(px*py)
			for comp := 0; comp < ncomp; comp++ {
				for z := zi * nz; z < (zi+1)*nz; z++ {
					for y := yi * ny; y < (yi+1)*ny; y++ {
						off := base + (((int64(comp)*N+int64(z))*N+int64(y))*N+int64(xi*nx))*dbl
						pt.blocks[r] = append(pt.blocks[r], block{off, int64(nx) * dbl})
					}
				}
			}
		}
		base += int64(ncomp) * N * N * N * dbl
	}
	pt.size = base
	return finish(pt), nil
}

// Dims3 factors p into three factors as equal as possible, largest first
// (what MPI_Dims_create gives).
func Dims3(p int) [3]int {
	d := [3]int{1, 1, 1}
	var primes []int
	for f, m := 2, p; m > 1; {
		if m%f == 0 {
			primes = append(primes, f)
			m /= f
			continue
		}
		f++
	}
	for k := len(primes) - 1; k >= 0; k-- {
		s := 0
		for i := 1; i < 3; i++ {
			if d[i] < d[s] {
				s = i
			}
		}
		d[s] *= primes[k]
	}
	slices.SortFunc(d[:], func(a, b int) int { return b - a })
	return d
}
