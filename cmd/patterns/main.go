//go:build cgo

// Command patterns runs application I/O patterns through collio and
// through the host MPI's own MPI-IO: each pattern writes its file with
// collective calls through the application's views and memory types,
// reads it back through the same views, and verifies every value (and
// that no guard cell or gap in memory was touched). Output and JSON are
// collperf's: bandwidth, the slowest rank's time per phase, collio's
// breakdown, memory per rank.
//
//	mpirun -np 4 patterns -pattern flash -dir /scratch/tmp
//	mpirun -np 4 patterns -pattern all -impl collio -hint collio_strategy=twophase -json out.json
//	mpirun -np 4 --mca io romio321 patterns -pattern e3sm -impl mpiio -dir /scratch/tmp
//
// Patterns (-pattern, a comma-separated list or "all"); np is the number
// of ranks, sizes are the defaults:
//
// flash: FLASH-IO's checkpoint. Each rank holds -flash-blocks blocks
// (16) of -flash-block³ cells (8³) with -flash-guard guard cells (4) on
// every side and -flash-vars variables (24), in FLASH's Fortran array
// unk(nvar, nxb+2g, nyb+2g, nzb+2g, blocks). The file stores variable
// after variable, each the interior cells of all blocks of all ranks (rank
// order). One collective call per variable, whose memory type is a 5-D
// subarray (noncontiguous: stride nvar, guard cells skipped). np·16·24·8³
// float64: 6 MiB at 4 ranks, each rank's 1.5 MiB inside a 12 MiB array.
//
// btio: NAS BT-IO (full MPI-IO). An n³ grid (-btio-size 64) of 5 float64
// per point, written -btio-steps times (4); np must be a square p² and
// the grid is cut into p³ cells in BT's multi-partition (diagonal)
// decomposition, p cells per rank, one in every slab of every direction.
// The filetype is a struct of the rank's cell subarrays, tiled once per
// step (nested strided views); one collective call per step. 64³·40 B =
// 10 MiB per step, 40 MiB in all.
//
// e3sm: an E3SM-IO-like history write: -e3sm-2d (4) 2-D variables of
// -e3sm-ncol columns (16384) and -e3sm-3d (8) 3-D variables of
// -e3sm-nlev (16) levels × ncol, stored one after the other. Rank
// ownership of columns comes from a synthetic decomposition map: the
// columns are cut into runs whose lengths follow 1 + a geometric
// distribution, P(len = k) = q(1−q)^(k−1) with q = 1/-e3sm-run (mean 8),
// truncated at 4·mean; each run is left to nobody with probability
// -e3sm-holes (0.05: fill-value gaps, which make collective writes
// read-modify-write) and the others are dealt to the ranks in rounds of
// np, each round in a fresh random order (PCG seeded with -e3sm-seed 1, the
// same on every rank): every rank gets the same number of runs ±1, finely
// and irregularly interleaved. Each rank writes all its pieces of all
// variables in one collective call (as PnetCDF's wait_all does): a struct
// of per-variable hindexed map types (an hvector over levels for 3-D
// variables), contiguous memory. About 16 MiB, 512 runs and 67,000 pieces
// of 64 bytes on average per rank at 4 ranks.
//
// s3d: S3D-IO's checkpoint. A -s3d-size grid (64: 64³, or X,Y,Z) block-
// decomposed over MPI_Dims_create's 3-D grid of ranks, four variables
// stored one after the other, each a Fortran 4-D array: mass fractions
// (x, y, z, -s3d-species 11), velocity (x, y, z, 3), pressure and
// temperature (x, y, z, 1). A rank's part of each is a 4-D subarray (its
// spatial block × all components); the filetype is the struct of the four,
// written in one collective call from a contiguous buffer. 64³·16·8 B =
// 32 MiB.
//
// testdata/patterns/README.md describes the patterns in more detail. Long
// runs print their progress on rank 0 (pattern, phase, percentage of the
// calls done, elapsed time) unless -q. Hints come from -hints k=v,k=v,
// -hint k=v and -hintfile path (ROMIO's "key value" lines), in
// command-line order.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
)

func init() { runtime.LockOSThread() } // MPI calls from the main thread

var allPatterns = []string{"flash", "btio", "e3sm", "s3d"}

type config struct {
	patterns []string
	dir      string
	impls    []string
	hints    collio.Hints
	hintSrc  map[string]string
	jsonPath string
	label    string
	keep     bool
	quiet    bool
	iters    int
	driver   string
	name     string
	sizes    sizes
}

func main() { benchutil.Main("patterns", parseFlags, run) }

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("patterns", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	var pats, impls, s3dSize string
	hs := benchutil.NewHintSet()
	sz := &c.sizes
	fs.StringVar(&pats, "pattern", "", "patterns to run: flash, btio, e3sm, s3d, a comma-separated list, or all (required)")
	fs.StringVar(&c.dir, "dir", "", "directory for the test files (required; use a parallel file system on a cluster)")
	fs.StringVar(&impls, "impl", "collio,mpiio", "comma-separated implementations: collio, mpiio (the host MPI-IO; choose its component with mpirun --mca io/fcoll)")
	hs.AddFlags(fs)
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file (rank 0)")
	fs.StringVar(&c.label, "label", "", "free-form label stored in the JSON (benchmark scripts name the storage with it)")
	fs.BoolVar(&c.keep, "keep", false, "keep the test files")
	fs.BoolVar(&c.quiet, "q", false, "quiet: print nothing but errors (no progress either)")
	fs.IntVar(&c.iters, "i", 1, "repetitions of each write and read")
	fs.StringVar(&c.name, "name", "collio", "label of the collio implementation in tables and JSON")
	fs.StringVar(&c.driver, "driver", "", "collio driver for the test files (e.g. sim); default: detected. Only with -impl collio")
	fs.IntVar(&sz.flashBlock, "flash-block", 8, "flash: interior cells per block side (nxb = nyb = nzb)")
	fs.IntVar(&sz.flashGuard, "flash-guard", 4, "flash: guard cells on each side")
	fs.IntVar(&sz.flashVars, "flash-vars", 24, "flash: variables")
	fs.IntVar(&sz.flashBlocks, "flash-blocks", 16, "flash: blocks per rank")
	fs.IntVar(&sz.btioN, "btio-size", 64, "btio: grid points per side")
	fs.IntVar(&sz.btioSteps, "btio-steps", 4, "btio: time steps written (one call each)")
	fs.IntVar(&sz.e3smCols, "e3sm-ncol", 16384, "e3sm: columns")
	fs.IntVar(&sz.e3smLev, "e3sm-nlev", 16, "e3sm: levels of the 3-D variables")
	fs.IntVar(&sz.e3sm2D, "e3sm-2d", 4, "e3sm: 2-D variables")
	fs.IntVar(&sz.e3sm3D, "e3sm-3d", 8, "e3sm: 3-D variables")
	fs.Float64Var(&sz.e3smRun, "e3sm-run", 8, "e3sm: mean run length of the decomposition map, in columns (>= 1)")
	fs.Float64Var(&sz.e3smHoles, "e3sm-holes", 0.05, "e3sm: fraction of runs no rank writes, in [0, 1)")
	fs.Uint64Var(&sz.e3smSeed, "e3sm-seed", 1, "e3sm: seed of the decomposition map")
	fs.StringVar(&s3dSize, "s3d-size", "64", "s3d: global grid, N (N³) or X,Y,Z")
	fs.IntVar(&sz.s3dSpecies, "s3d-species", 11, "s3d: chemical species")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: mpirun -np N patterns -pattern flash|btio|e3sm|s3d|all -dir DIR [flags]\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return c, benchutil.UsageError{Usage: b.String()}
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (every option is a -flag)", fs.Arg(0))
	}
	var err error
	if c.patterns, err = parsePatterns(pats); err != nil {
		return c, err
	}
	if c.dir == "" {
		return c, fmt.Errorf("-dir is required")
	}
	if st, err := os.Stat(c.dir); err != nil {
		return c, fmt.Errorf("-dir: %w", err)
	} else if !st.IsDir() {
		return c, fmt.Errorf("-dir %s: not a directory", c.dir)
	}
	if c.iters < 1 || c.iters > 500 {
		return c, fmt.Errorf("-i %d: want 1 to 500 repetitions", c.iters)
	}
	if strings.ContainsAny(c.label, "\n\r") {
		return c, fmt.Errorf("-label: must be one line")
	}
	if c.impls, err = benchutil.ParseImpls(impls); err != nil {
		return c, err
	}
	if c.driver != "" && slices.Contains(c.impls, "mpiio") {
		return c, fmt.Errorf("-driver %s: the host MPI-IO cannot use collio drivers; use -impl collio", c.driver)
	}
	if sz.s3d, err = parseGrid(s3dSize); err != nil {
		return c, fmt.Errorf("-s3d-size: %w", err)
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"flash-block", sz.flashBlock}, {"flash-vars", sz.flashVars}, {"flash-blocks", sz.flashBlocks},
		{"btio-size", sz.btioN}, {"btio-steps", sz.btioSteps}, {"e3sm-ncol", sz.e3smCols}, {"e3sm-nlev", sz.e3smLev},
		{"s3d-species", sz.s3dSpecies}} {
		if v.v < 1 {
			return c, fmt.Errorf("-%s %d: want at least 1", v.name, v.v)
		}
	}
	switch {
	case sz.flashGuard < 0:
		return c, fmt.Errorf("-flash-guard %d: negative", sz.flashGuard)
	case sz.e3sm2D < 0 || sz.e3sm3D < 0 || sz.e3sm2D+sz.e3sm3D == 0:
		return c, fmt.Errorf("-e3sm-2d %d -e3sm-3d %d: want at least one variable", sz.e3sm2D, sz.e3sm3D)
	case !(sz.e3smRun >= 1):
		return c, fmt.Errorf("-e3sm-run %g: the mean run length must be at least 1", sz.e3smRun)
	case !(sz.e3smHoles >= 0 && sz.e3smHoles < 1):
		return c, fmt.Errorf("-e3sm-holes %g: want a fraction in [0, 1)", sz.e3smHoles)
	}
	c.hints, c.hintSrc = collio.Hints(hs.Vals), hs.Source
	return c, nil
}

func parsePatterns(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("-pattern is required: flash, btio, e3sm, s3d or all")
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "all":
			for _, a := range allPatterns {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		case !slices.Contains(allPatterns, p):
			return nil, fmt.Errorf("-pattern %q: %q is not a pattern; allowed: %s, all", s, p, strings.Join(allPatterns, ", "))
		case slices.Contains(out, p):
			return nil, fmt.Errorf("-pattern %q: %s given twice (use -i for repetitions)", s, p)
		default:
			out = append(out, p)
		}
	}
	return out, nil
}

func parseGrid(s string) ([3]int, error) {
	var g [3]int
	parts := strings.Split(s, ",")
	if len(parts) == 1 {
		parts = []string{s, s, s}
	}
	if len(parts) != 3 {
		return g, fmt.Errorf("%q: want N or X,Y,Z", s)
	}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return g, fmt.Errorf("%q: %q is not a positive integer", s, p)
		}
		g[i] = v
	}
	return g, nil
}
