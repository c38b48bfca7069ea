//go:build cgo

package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/collio/collio/internal/benchutil"
)

// Every pattern's file is an array of float64: element i (bytes 8i to
// 8i+8) holds value(i, iter), so a read can be checked anywhere. A
// pattern says which elements a rank moves in each call and where they
// are in its memory buffer (each), and builds the datatypes that describe
// the same thing to collio or to the host MPI-IO (plan). The unit tests
// check the two against each other through the collio layouts.

// pattern is one application I/O pattern on one rank.
type pattern interface {
	name() string
	caseText() string
	params() map[string]any
	// bytes is the data one write (or read) moves, over all ranks.
	bytes() int64
	// bufLen is the length of this rank's memory buffer, in float64s.
	bufLen() int
	// calls is the number of collective calls of one write (or read).
	calls() int
	// plan builds the view and the calls' memory types.
	plan(t *benchutil.Types) (view, []call, error)
	// each calls f with the buffer index (float64s) and the file element
	// of every element of call k, in the order the call moves them.
	each(k int, f func(mem int, file int64))
}

type view struct {
	disp            int64
	etype, filetype benchutil.Type
}

// call is one collective call: count instances of *mem (nil: the buffer
// is contiguous) at offset off, in etypes of the view.
type call struct {
	mem   *benchutil.Type
	count int
	off   int64
	size  int64 // bytes
}

// value is what file element i holds in repetition iter: an integer,
// exact in float64 (i < 2^44, iter < 2^9).
func value(i int64, iter int) uint64 {
	return math.Float64bits(float64(i + int64(iter)<<44))
}

// sentinel marks buffer elements that no call moves (guard cells) and
// elements a read has not filled yet: a NaN no value equals.
const sentinel = 0xfff4_0000_dead_beef

// sizes are the problem sizes of all patterns (flags).
type sizes struct {
	flashBlock, flashGuard, flashVars, flashBlocks int
	btioN, btioSteps                               int
	e3smCols, e3smLev, e3sm2D, e3sm3D              int
	e3smRun, e3smHoles                             float64
	e3smSeed                                       uint64
	s3d                                            [3]int
	s3dSpecies                                     int
}

func newPattern(name string, rank, np int, sz sizes) (pattern, error) {
	switch name {
	case "flash":
		return newFlash(rank, np, sz)
	case "btio":
		return newBTIO(rank, np, sz)
	case "e3sm":
		return newE3SM(rank, np, sz)
	case "s3d":
		return newS3D(rank, np, sz)
	}
	return nil, fmt.Errorf("unknown pattern %q (want flash, btio, e3sm or s3d)", name)
}

// ---- FLASH-IO ----

// flash is a FLASH-IO-like checkpoint: every rank holds nblk blocks of
// nxb³ cells surrounded by ng guard cells, with nvar variables per cell,
// in FLASH's unk(nvar, nxb+2ng, nyb+2ng, nzb+2ng, nblk) Fortran array
// (the variable varies fastest). The file stores variable after variable;
// within a variable, every block of every rank in global block order
// (rank r's blocks are r*nblk ...), each block's interior cells in
// Fortran order. One collective call per variable; its memory type is a
// 5-D Fortran subarray picking the variable and the interior cells, so
// the memory side is noncontiguous (stride nvar elements, guard cells
// skipped); the view shows each rank its blocks of every variable.
type flash struct {
	rank, np           int
	nxb, ng, nvar, blk int
}

func newFlash(rank, np int, sz sizes) (*flash, error) {
	return &flash{rank: rank, np: np, nxb: sz.flashBlock, ng: sz.flashGuard, nvar: sz.flashVars, blk: sz.flashBlocks}, nil
}

func (p *flash) name() string { return "flash" }
func (p *flash) caseText() string {
	return fmt.Sprintf("%d vars × %d blocks/rank of %d³ cells (+%d guard cells), float64, one call per variable", p.nvar, p.blk, p.nxb, p.ng)
}
func (p *flash) params() map[string]any {
	return map[string]any{"nxb": p.nxb, "nguard": p.ng, "nvar": p.nvar, "blocks_per_rank": p.blk}
}
func (p *flash) cells() int { return p.nxb * p.nxb * p.nxb }
func (p *flash) nx() int    { return p.nxb + 2*p.ng }
func (p *flash) bytes() int64 {
	return int64(p.np) * int64(p.blk) * int64(p.cells()) * int64(p.nvar) * 8
}
func (p *flash) bufLen() int   { return p.nvar * p.nx() * p.nx() * p.nx() * p.blk }
func (p *flash) calls() int    { return p.nvar }
func (p *flash) perVar() int64 { return int64(p.blk) * int64(p.cells()) }

func (p *flash) plan(t *benchutil.Types) (view, []call, error) {
	f64 := t.Float64()
	mine, err := t.Contiguous(int(p.perVar()), f64)
	if err == nil {
		mine, err = t.Resized(mine, 0, int64(p.np)*p.perVar()*8)
	}
	if err != nil {
		return view{}, nil, err
	}
	v := view{disp: int64(p.rank) * p.perVar() * 8, etype: f64, filetype: mine}
	nx := p.nx()
	calls := make([]call, p.nvar)
	for i := range calls {
		m, err := t.Subarray([]int{p.nvar, nx, nx, nx, p.blk}, []int{1, p.nxb, p.nxb, p.nxb, p.blk},
			[]int{i, p.ng, p.ng, p.ng, 0}, true, f64)
		if err != nil {
			return view{}, nil, err
		}
		calls[i] = call{mem: &m, count: 1, off: int64(i) * p.perVar(), size: p.perVar() * 8}
	}
	return v, calls, nil
}

func (p *flash) each(v int, f func(mem int, file int64)) {
	nx := p.nx()
	for b := 0; b < p.blk; b++ {
		base := (int64(v)*int64(p.np)*int64(p.blk) + int64(p.rank*p.blk+b)) * int64(p.cells())
		for z := 0; z < p.nxb; z++ {
			for y := 0; y < p.nxb; y++ {
				for x := 0; x < p.nxb; x++ {
					mem := v + p.nvar*((x+p.ng)+nx*((y+p.ng)+nx*((z+p.ng)+nx*b)))
					f(mem, base+int64((z*p.nxb+y)*p.nxb+x))
				}
			}
		}
	}
}

// ---- BTIO ----

// btio is NAS BT-IO's full MPI-IO pattern: an n³ grid of points with 5
// float64 components each, written once per time step (the file is the
// array, C order, z slowest, repeated per step). The grid is cut into
// p×p×p cells (p = √np, so np must be a square) in BT's multi-partition
// (diagonal) decomposition: rank r = a + p·b owns the p cells
// ((a+c) mod p, (b−c) mod p, c) in (x, y, z) for c = 0..p−1, one in every
// slab of every direction. The filetype is a struct of the rank's p cell
// subarrays (etype: the 5 components), tiled once per step, so step s is
// offset s × (the rank's points) in the view: nested strided views. The
// memory buffer is contiguous (one step, cell after cell).
type btio struct {
	rank, np, p, n, steps int
	cells                 [][2][3]int // per cell: start, size (z, y, x)
	points                int
}

func newBTIO(rank, np int, sz sizes) (*btio, error) {
	p := int(math.Round(math.Sqrt(float64(np))))
	if p*p != np {
		return nil, fmt.Errorf("btio needs a square number of ranks (1, 4, 9, 16, ...), not %d", np)
	}
	if sz.btioN < p {
		return nil, fmt.Errorf("btio: grid %d³ is smaller than the %d×%d×%d cells", sz.btioN, p, p, p)
	}
	b := &btio{rank: rank, np: np, p: p, n: sz.btioN, steps: sz.btioSteps}
	a, bb := rank%p, rank/p
	for c := 0; c < p; c++ {
		coord := [3]int{c, ((bb-c)%p + p) % p, (a + c) % p} // z, y, x
		var cell [2][3]int
		for d := 0; d < 3; d++ {
			cell[0][d], cell[1][d] = benchutil.Split1(b.n, p, coord[d])
		}
		b.cells = append(b.cells, cell)
		b.points += cell[1][0] * cell[1][1] * cell[1][2]
	}
	return b, nil
}

func (p *btio) name() string { return "btio" }
func (p *btio) caseText() string {
	return fmt.Sprintf("%d³ points × 5 float64, %d steps, %d cells/rank (multi-partition on %d×%d×%d cells)", p.n, p.steps, p.p, p.p, p.p, p.p)
}
func (p *btio) params() map[string]any {
	return map[string]any{"n": p.n, "steps": p.steps, "cells_per_dim": p.p}
}
func (p *btio) bytes() int64 { return int64(p.n) * int64(p.n) * int64(p.n) * 40 * int64(p.steps) }
func (p *btio) bufLen() int  { return p.points * 5 }
func (p *btio) calls() int   { return p.steps }

func (p *btio) plan(t *benchutil.Types) (view, []call, error) {
	elem, err := t.Contiguous(5, t.Float64())
	if err != nil {
		return view{}, nil, err
	}
	subs := make([]benchutil.Type, len(p.cells))
	ones := make([]int, len(p.cells))
	zeros := make([]int64, len(p.cells))
	for i, c := range p.cells {
		if subs[i], err = t.Subarray([]int{p.n, p.n, p.n}, c[1][:], c[0][:], false, elem); err != nil {
			return view{}, nil, err
		}
		ones[i] = 1
	}
	ft, err := t.Struct(ones, zeros, subs)
	if err != nil {
		return view{}, nil, err
	}
	calls := make([]call, p.steps)
	for s := range calls {
		calls[s] = call{off: int64(s) * int64(p.points), size: int64(p.points) * 40}
	}
	return view{etype: elem, filetype: ft}, calls, nil
}

func (p *btio) each(s int, f func(mem int, file int64)) {
	k := 0
	n := int64(p.n)
	for _, c := range p.cells {
		for z := c[0][0]; z < c[0][0]+c[1][0]; z++ {
			for y := c[0][1]; y < c[0][1]+c[1][1]; y++ {
				for x := c[0][2]; x < c[0][2]+c[1][2]; x++ {
					base := (((int64(s)*n+int64(z))*n+int64(y))*n + int64(x)) * 5
					for m := int64(0); m < 5; m++ {
						f(k, base+m)
						k++
					}
				}
			}
		}
	}
}

// ---- E3SM ----

// e3sm is an E3SM-IO-like history write: nv2 2-D variables (ncol
// columns) and nv3 3-D variables (nlev levels × ncol, level-major), stored
// one after the other as in a netCDF file. Which rank owns which column
// comes from a synthetic decomposition map (genMap): runs of consecutive
// columns with geometric lengths, dealt to the ranks in shuffled rounds,
// a fraction left to nobody (holes, as E3SM's fill-valued columns). Each
// rank writes all its pieces of all variables in one collective call:
// the filetype is a struct of, per variable, the map's hindexed type
// (repeated per level with an hvector for 3-D variables); memory is
// contiguous.
type e3sm struct {
	rank, np              int
	ncol, nlev, nv2, nv3  int
	run, holes            float64
	seed                  uint64
	mine                  []colRun // this rank's runs, by start
	owned, ownedAll, nrun int      // columns of this rank, of all ranks; runs in the map
}

// colRun is a piece of the decomposition map: columns [start, start+n).
type colRun struct{ start, n int }

// genMap is the synthetic decomposition map: the owner of each run of
// columns. Run lengths are 1 + Geometric: P(len = k) = q(1−q)^(k−1) with
// q = 1/mean, truncated at 4·mean (and at the last column). Each run is a
// hole (owner −1) with probability holes; the others are dealt to the
// ranks in rounds of np, each round in a fresh random order, so every rank
// gets the same number of runs ±1 in an irregular interleaving. The
// generator is PCG seeded with (seed, 0xE35A), the same on every rank.
func genMap(ncol, np int, mean, holes float64, seed uint64) (runs []colRun, owner []int) {
	rng := rand.New(rand.NewPCG(seed, 0xE35A))
	var perm []int
	for col := 0; col < ncol; {
		n := 1
		for float64(n) < 4*mean && rng.Float64() >= 1/mean {
			n++
		}
		n = min(n, ncol-col)
		o := -1
		if rng.Float64() >= holes {
			if len(perm) == 0 {
				perm = rng.Perm(np)
			}
			o, perm = perm[0], perm[1:]
		}
		runs = append(runs, colRun{col, n})
		owner = append(owner, o)
		col += n
	}
	return runs, owner
}

func newE3SM(rank, np int, sz sizes) (*e3sm, error) {
	p := &e3sm{rank: rank, np: np, ncol: sz.e3smCols, nlev: sz.e3smLev, nv2: sz.e3sm2D, nv3: sz.e3sm3D,
		run: sz.e3smRun, holes: sz.e3smHoles, seed: sz.e3smSeed}
	runs, owner := genMap(p.ncol, np, p.run, p.holes, p.seed)
	p.nrun = len(runs)
	per := make([]int, np)
	for i, r := range runs {
		if owner[i] < 0 {
			continue
		}
		per[owner[i]]++
		p.ownedAll += r.n
		if owner[i] == rank {
			p.mine = append(p.mine, r)
			p.owned += r.n
		}
	}
	if slicesMin(per) == 0 {
		return nil, fmt.Errorf("e3sm: the map of %d columns leaves some of the %d ranks without columns; use a larger -e3sm-ncol", p.ncol, np)
	}
	return p, nil
}

func slicesMin(xs []int) int {
	m := math.MaxInt
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func (p *e3sm) name() string { return "e3sm" }
func (p *e3sm) caseText() string {
	return fmt.Sprintf("ncol %d, nlev %d, %d 2-D + %d 3-D vars, %d runs of mean %.3g columns, %.0f%% holes, seed %d, one call",
		p.ncol, p.nlev, p.nv2, p.nv3, p.nrun, p.run, 100*p.holes, p.seed)
}
func (p *e3sm) params() map[string]any {
	return map[string]any{"ncol": p.ncol, "nlev": p.nlev, "vars_2d": p.nv2, "vars_3d": p.nv3, "mean_run": p.run,
		"holes": p.holes, "seed": p.seed, "runs": p.nrun, "pieces_per_rank_max_estimate": len(p.mine) * (p.nv2 + p.nv3*p.nlev)}
}
func (p *e3sm) perCol() int     { return p.nv2 + p.nv3*p.nlev }
func (p *e3sm) bytes() int64    { return int64(p.ownedAll) * int64(p.perCol()) * 8 }
func (p *e3sm) bufLen() int     { return p.owned * p.perCol() }
func (p *e3sm) calls() int      { return 1 }
func (p *e3sm) nvars() int      { return p.nv2 + p.nv3 }
func (p *e3sm) is3D(j int) bool { return j >= p.nv2 }

// base is the first file element of variable j.
func (p *e3sm) base(j int) int64 {
	if j < p.nv2 {
		return int64(j) * int64(p.ncol)
	}
	return int64(p.nv2)*int64(p.ncol) + int64(j-p.nv2)*int64(p.nlev)*int64(p.ncol)
}

func (p *e3sm) plan(t *benchutil.Types) (view, []call, error) {
	f64 := t.Float64()
	lens := make([]int, len(p.mine))
	displs := make([]int64, len(p.mine))
	for i, r := range p.mine {
		lens[i], displs[i] = r.n, int64(r.start)*8
	}
	m, err := t.HIndexed(lens, displs, f64)
	if err != nil {
		return view{}, nil, err
	}
	var m3 benchutil.Type
	if p.nv3 > 0 {
		if m3, err = t.HVector(p.nlev, 1, int64(p.ncol)*8, m); err != nil {
			return view{}, nil, err
		}
	}
	n := p.nvars()
	ones := make([]int, n)
	bases := make([]int64, n)
	types := make([]benchutil.Type, n)
	for j := range n {
		ones[j], bases[j], types[j] = 1, p.base(j)*8, m
		if p.is3D(j) {
			types[j] = m3
		}
	}
	ft, err := t.Struct(ones, bases, types)
	if err != nil {
		return view{}, nil, err
	}
	return view{etype: f64, filetype: ft}, []call{{size: int64(p.bufLen()) * 8}}, nil
}

func (p *e3sm) each(_ int, f func(mem int, file int64)) {
	k := 0
	for j := range p.nvars() {
		levels := 1
		if p.is3D(j) {
			levels = p.nlev
		}
		for lev := range levels {
			base := p.base(j) + int64(lev)*int64(p.ncol)
			for _, r := range p.mine {
				for c := r.start; c < r.start+r.n; c++ {
					f(k, base+int64(c))
					k++
				}
			}
		}
	}
}

// ---- S3D ----

// s3d is S3D-IO's checkpoint: a gx×gy×gz grid block-decomposed over a
// 3-D grid of ranks (MPI_Dims_create's balance, x fastest in the rank
// numbering), with four variables stored one after the other as in its
// netCDF file, each a Fortran-order 4-D array: mass fractions
// (gx, gy, gz, species), velocity (gx, gy, gz, 3), pressure and
// temperature (gx, gy, gz, 1). A rank's part of each is a 4-D subarray (its
// 3-D spatial block × all components); the filetype is the struct of the
// four subarrays, written in one collective call from a contiguous
// buffer (the four local arrays one after the other).
type s3d struct {
	rank, np  int
	g         [3]int
	start, sz [3]int
	grid      [3]int
	comps     []int // components per variable
	varNames  []string
	nsp       int
}

func newS3D(rank, np int, s sizes) (*s3d, error) {
	p := &s3d{rank: rank, np: np, g: s.s3d, nsp: s.s3dSpecies,
		comps: []int{s.s3dSpecies, 3, 1, 1}, varNames: []string{"yspecies", "velocity", "pressure", "temperature"}}
	d := benchutil.DimsCreate(np)
	p.grid = d
	coord := [3]int{rank % d[0], rank / d[0] % d[1], rank / (d[0] * d[1])}
	for i := range 3 {
		if p.g[i] < d[i] {
			return nil, fmt.Errorf("s3d: grid %v is smaller than the %v ranks", p.g, d)
		}
		p.start[i], p.sz[i] = benchutil.Split1(p.g[i], d[i], coord[i])
	}
	return p, nil
}

func (p *s3d) name() string { return "s3d" }
func (p *s3d) caseText() string {
	return fmt.Sprintf("%d×%d×%d grid on %d×%d×%d ranks, %d species + velocity(3) + pressure + temperature, float64, one call",
		p.g[0], p.g[1], p.g[2], p.grid[0], p.grid[1], p.grid[2], p.nsp)
}
func (p *s3d) params() map[string]any {
	return map[string]any{"grid": p.g, "rank_grid": p.grid, "species": p.nsp, "variables": p.varNames}
}
func (p *s3d) points() int64 { return int64(p.g[0]) * int64(p.g[1]) * int64(p.g[2]) }
func (p *s3d) ncomp() int {
	n := 0
	for _, c := range p.comps {
		n += c
	}
	return n
}
func (p *s3d) bytes() int64 { return p.points() * int64(p.ncomp()) * 8 }
func (p *s3d) bufLen() int  { return p.sz[0] * p.sz[1] * p.sz[2] * p.ncomp() }
func (p *s3d) calls() int   { return 1 }

// base is the first file element of variable v.
func (p *s3d) base(v int) int64 {
	var b int64
	for _, c := range p.comps[:v] {
		b += p.points() * int64(c)
	}
	return b
}

func (p *s3d) plan(t *benchutil.Types) (view, []call, error) {
	n := len(p.comps)
	ones := make([]int, n)
	bases := make([]int64, n)
	types := make([]benchutil.Type, n)
	for v, c := range p.comps {
		sub, err := t.Subarray([]int{p.g[0], p.g[1], p.g[2], c}, []int{p.sz[0], p.sz[1], p.sz[2], c},
			[]int{p.start[0], p.start[1], p.start[2], 0}, true, t.Float64())
		if err != nil {
			return view{}, nil, err
		}
		ones[v], bases[v], types[v] = 1, p.base(v)*8, sub
	}
	ft, err := t.Struct(ones, bases, types)
	if err != nil {
		return view{}, nil, err
	}
	return view{etype: t.Float64(), filetype: ft}, []call{{size: int64(p.bufLen()) * 8}}, nil
}

func (p *s3d) each(_ int, f func(mem int, file int64)) {
	k := 0
	g := [3]int64{int64(p.g[0]), int64(p.g[1]), int64(p.g[2])}
	for v, nc := range p.comps {
		base := p.base(v)
		for c := 0; c < nc; c++ {
			for z := p.start[2]; z < p.start[2]+p.sz[2]; z++ {
				for y := p.start[1]; y < p.start[1]+p.sz[1]; y++ {
					row := base + ((int64(c)*g[2]+int64(z))*g[1]+int64(y))*g[0]
					for x := p.start[0]; x < p.start[0]+p.sz[0]; x++ {
						f(k, row+int64(x))
						k++
					}
				}
			}
		}
	}
}
