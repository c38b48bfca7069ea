package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// block is a contiguous run of file bytes [off, off+n) one rank writes.
type block struct{ off, n int64 }

// pattern gives every rank's blocks, sorted by offset, adjacent blocks
// merged (so that they are the pieces a file view yields).
type pattern struct {
	name   string
	blocks [][]block // per rank
	size   int64     // file bytes the pattern covers (its extent)
}

// patternSizes are the problem sizes, from flags.
type patternSizes struct {
	e3smCells, e3smLev, e3smVars, e3smStride int
	e3smSeg                                  float64
	seed                                     uint64
	btioN, s3dN                              int
}

func makePattern(name string, p int, sz patternSizes) (*pattern, error) {
	switch name {
	case "e3sm":
		return e3sm(p, sz), nil
	case "btio":
		return btio(p, sz.btioN)
	case "s3d":
		return s3d(p, sz.s3dN)
	}
	return nil, fmt.Errorf("unknown pattern %q (want e3sm, btio or s3d)", name)
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
func e3sm(p int, sz patternSizes) *pattern {
	rng := rand.New(rand.NewPCG(sz.seed, 0xE35))
	ncells := int64(p) * int64(sz.e3smCells)
	type seg struct {
		start, n int64 // SFC positions
		rank     int
	}
	var segs []seg
	for pos := int64(0); pos < ncells; {
		n := int64(1)
		for rng.Float64() < 1-1/sz.e3smSeg {
			n++
		}
		r := pos / int64(sz.e3smCells)
		n = min(n, (r+1)*int64(sz.e3smCells)-pos) // a segment stays on one rank
		segs = append(segs, seg{pos, n, int(r)})
		pos += n
	}
	stride := max(sz.e3smStride, 1)
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
	for v := 0; v < sz.e3smVars; v++ {
		for l := 0; l < sz.e3smLev; l++ {
			base := int64(v*sz.e3smLev+l) * slab
			for k, s := range segs {
				pt.blocks[s.rank] = append(pt.blocks[s.rank], block{base + cellOff[k]*dbl, s.n * dbl})
			}
		}
	}
	pt.size = int64(sz.e3smVars*sz.e3smLev) * slab
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
		return nil, fmt.Errorf("btio needs a square number of ranks, not %d", p)
	}
	if n%q != 0 {
		return nil, fmt.Errorf("btio: array side %d is not a multiple of sqrt(ranks) = %d", n, q)
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
	d := dims3(p)
	px, py, pz := d[0], d[1], d[2]
	if n%px != 0 || n%py != 0 || n%pz != 0 {
		return nil, fmt.Errorf("s3d: mesh side %d not divisible by the process grid %dx%dx%d", n, px, py, pz)
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

// dims3 factors p into three factors as equal as possible, largest first
// (what MPI_Dims_create gives).
func dims3(p int) [3]int {
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
