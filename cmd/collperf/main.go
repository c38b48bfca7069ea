//go:build cgo

// Command collperf is a coll_perf-style benchmark: a 3-D array of int32
// block-distributed over a 3-D grid of ranks, each rank's block described by
// a subarray file view, written with a collective write and read back with a
// collective read, every value verified. It runs the same workload through
// collio and through the host MPI's own MPI-IO and prints bandwidth and a
// timing breakdown (the slowest rank's time in each phase), collio's own
// account of each collective call (plan, request exchange, shuffle, file
// I/O, read-modify-write), and memory per rank (peak RSS, Go heap allocated
// during each transfer on aggregators and on the other ranks).
//
//	mpirun -np 4 collperf -dir /scratch/tmp -size 256
//	mpirun -np 4 --mca io ompio --mca fcoll vulcan collperf -impl mpiio -dir /scratch/tmp
//	mpirun -np 4 collperf -impl collio -dir /scratch/tmp -hintfile romio.hints -hint cb_nodes=2 -i 3 -json out.json
//
// Hints come from -hints k=v,k=v, -hint k=v and -hintfile path (ROMIO's
// "key value" lines), in command-line order: a key given again wins. Long
// runs print their progress on rank 0 (operation, share done, elapsed
// time) unless -q.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

func init() { runtime.LockOSThread() } // MPI calls from the main thread

type config struct {
	dir      string
	size     [3]int
	impls    []string
	hints    collio.Hints
	hintSrc  map[string]string // where each hint came from
	jsonPath string
	label    string
	keep     bool
	quiet    bool
	iters    int
	driver   string // collio driver prefix ("sim", "faulty", ...), "" = detect
	name     string // label of the collio implementation in results
	noSync   bool   // -sync=false: writes do not call MPI_File_sync
	// -phases N: N write phases with compute (-compute, -compute-busy)
	// in between, then one read (see phases.go).
	phases   int
	computes []time.Duration
	busy     bool
	// -interleave: repetition by repetition over the implementations.
	interleave bool
	// -indep: independent write_at/read_at instead of the collective calls.
	indep bool
	// -warmup: one untimed write and read of each implementation first.
	warmup bool
	// -overlap f,f,...: the overlap mode (overlap.go): compute times as
	// multiples of the I/O time; overlapRounds measurements each.
	overlap       []float64
	overlapRounds int
}

// implRun is one implementation's part of a launch: its workload, file
// and what is reported about it.
type implRun struct {
	kind, path string
	info       benchutil.ImplInfo
	w          workload
	reset      bool // peak RSS could be reset before its first repetition
	failed     bool
}

func newImplRun(cfg config, world comm.Comm, kind string) *implRun {
	r := &implRun{kind: kind, path: filepath.Join(cfg.dir, "collperf."+kind),
		info: benchutil.ImplInfo{Impl: kind, Kind: kind, Workload: "collperf"}}
	switch kind {
	case "collio":
		if cfg.driver != "" {
			r.path = cfg.driver + ":" + r.path
		}
		r.info.Impl = cfg.name
		r.w = &collioWorkload{comm: world, hints: cfg.hints, indep: cfg.indep}
	case "mpiio":
		r.w = &hostWorkload{comm: mpi.World(), hints: cfg.hints, indep: cfg.indep}
		r.info.Impl = benchutil.HostLabel(os.Getenv)
		r.info.MCA = benchutil.HostMCA(os.Getenv)
	}
	return r
}

func main() { benchutil.Main("collperf", parseFlags, run) }

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("collperf", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, usage printed by main on -h
	var c config
	var size, impls string
	hs := benchutil.NewHintSet()
	fs.StringVar(&c.dir, "dir", "", "directory for the test file (required; use a parallel file system on a cluster)")
	fs.StringVar(&size, "size", "256", "global array size: N (N×N×N) or X,Y,Z, in int32 elements")
	fs.StringVar(&impls, "impl", "collio,mpiio", "comma-separated implementations: collio, mpiio (the host MPI-IO; choose its component with mpirun --mca io/fcoll)")
	hs.AddFlags(fs)
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file (rank 0)")
	fs.StringVar(&c.label, "label", "", "free-form label stored in the JSON (benchmark scripts name the run or storage with it)")
	fs.BoolVar(&c.keep, "keep", false, "keep the test files")
	fs.BoolVar(&c.quiet, "q", false, "quiet: print nothing but errors")
	fs.IntVar(&c.iters, "i", 1, "repetitions of each write and read")
	fs.StringVar(&c.name, "name", "collio", "label of the collio implementation in tables and JSON (benchmark scripts tell variants apart with it)")
	sync := fs.Bool("sync", true, "call MPI_File_sync after each write (false: data may still be in a cache at close, as in the E10 workflow)")
	fs.IntVar(&c.phases, "phases", 0, "write phases with compute in between (E10 workflow: perceived bandwidth and its model); 0 = write then read, -i times")
	compute := fs.String("compute", "0", "compute time after each write phase but the last (with -phases), e.g. 500ms; a comma-separated list runs the phases once per value")
	fs.BoolVar(&c.busy, "compute-busy", false, "compute by spinning on the rank's thread instead of sleeping")
	fs.BoolVar(&c.warmup, "warmup", false, "write and read once, untimed, before the repetitions of each implementation (as coll_perf does \"to eliminate paging effects\"): the first write of a file allocates its pages")
	fs.BoolVar(&c.indep, "indep", false, "independent calls (write_at, read_at) instead of write_at_all and read_at_all: each rank alone, no collective I/O")
	fs.BoolVar(&c.interleave, "interleave", false, "with several implementations, alternate them repetition by repetition (rep 1 of each, then rep 2, ...) so that they meet the same machine state; peak RSS is then the whole launch's")
	fs.StringVar(&c.driver, "driver", "", "collio driver for the test file (e.g. sim for the emulated striped file system); default: detected. Only with -impl collio")
	overlap := fs.String("overlap", "", "overlap mode: compute + nonblocking write/read + wait against compute + blocking, for compute times given as multiples of the I/O time (e.g. 0,0.5,1,2); collio only (-compute-busy spins)")
	fs.IntVar(&c.overlapRounds, "overlap-rounds", 5, "measurements per figure in the overlap mode (the median is shown)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: mpirun -np N collperf -dir DIR [flags]\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return c, benchutil.UsageError{Usage: b.String()}
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (every option is a -flag)", fs.Arg(0))
	}
	if c.dir == "" {
		return c, fmt.Errorf("-dir is required")
	}
	if st, err := os.Stat(c.dir); err != nil {
		return c, fmt.Errorf("-dir: %w", err)
	} else if !st.IsDir() {
		return c, fmt.Errorf("-dir %s: not a directory", c.dir)
	}
	if c.iters < 1 {
		return c, fmt.Errorf("-i %d: need at least one repetition", c.iters)
	}
	c.noSync = !*sync
	switch {
	case c.phases < 0:
		return c, fmt.Errorf("-phases %d: need 0 (off) or more phases", c.phases)
	}
	for _, v := range strings.Split(*compute, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return c, fmt.Errorf("-compute %q: %q is not a duration >= 0 (e.g. 500ms, 2s)", *compute, v)
		}
		if d > 0 && c.phases == 0 {
			return c, fmt.Errorf("-compute needs -phases N (the compute runs between write phases)")
		}
		c.computes = append(c.computes, d)
	}
	if strings.ContainsAny(c.label, "\n\r") {
		return c, fmt.Errorf("-label: must be one line")
	}
	var err error
	if c.size, err = parseSize(size); err != nil {
		return c, err
	}
	if c.impls, err = benchutil.ParseImpls(impls); err != nil {
		return c, err
	}
	if c.driver != "" && slices.Contains(c.impls, "mpiio") {
		return c, fmt.Errorf("-driver %s: the host MPI-IO cannot use collio drivers; add -impl collio", c.driver)
	}
	c.hints, c.hintSrc = collio.Hints(hs.Vals), hs.Source
	if *overlap != "" {
		if c.phases > 0 || c.indep || c.interleave {
			return c, fmt.Errorf("-overlap is a mode of its own: not with -phases, -indep or -interleave")
		}
		if c.overlap, err = benchutil.OverlapFactors(fs, *overlap, c.impls, c.overlapRounds); err != nil {
			return c, err
		}
		c.impls = []string{"collio"}
	}
	return c, nil
}

func parseSize(s string) ([3]int, error) {
	var g [3]int
	parts := strings.Split(s, ",")
	if len(parts) == 1 {
		parts = []string{s, s, s}
	}
	if len(parts) != 3 {
		return g, fmt.Errorf("-size %q: want N or X,Y,Z", s)
	}
	n := int64(1)
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return g, fmt.Errorf("-size %q: %q is not a positive integer", s, p)
		}
		g[i] = v
		if n *= int64(v); n > math.MaxInt32 {
			return g, fmt.Errorf("-size %q: more than 2^31-1 elements (the values are int32 indices)", s)
		}
	}
	return g, nil
}

// report is the JSON document (-json).
type report struct {
	Workload string                    `json:"workload"` // "collperf"
	Case     string                    `json:"case"`     // the array, e.g. "256×256×256 int32"
	Label    string                    `json:"label,omitempty"`
	Time     string                    `json:"time"`
	Host     string                    `json:"host"` // rank 0's
	Command  []string                  `json:"command"`
	NP       int                       `json:"np"`
	Grid     [3]int                    `json:"grid"`
	Size     [3]int                    `json:"size"`
	Bytes    int64                     `json:"bytes"`
	Dir      string                    `json:"dir"`
	FS       string                    `json:"fs"`
	Hints    map[string]string         `json:"hints"`
	HintFrom map[string]string         `json:"hint_sources,omitempty"`
	Iters    int                       `json:"iters"`
	Impls    []benchutil.ImplInfo      `json:"impls"`
	Results  []benchutil.Result        `json:"results"`
	Phases   []*phaseRun               `json:"phase_runs,omitempty"`   // -phases
	Busy     bool                      `json:"compute_busy,omitempty"` // -compute-busy
	Overlap  []benchutil.OverlapResult `json:"overlap,omitempty"`      // -overlap
	Errors   []string                  `json:"errors,omitempty"`
}

func run(cfg config) int {
	collio.ShareCores() // one Go processor per core of the node, not per rank
	world, err := collio.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, "collperf:", err)
		return 1
	}
	defer collio.Finalize()
	rank, np := world.Rank(), world.Size()
	grid := benchutil.DimsCreate(np)
	blk, err := decompose(cfg.size, grid, rank)
	if err != nil {
		fmt.Fprintln(os.Stderr, "collperf:", err)
		return 1
	}
	total := int64(cfg.size[0]) * int64(cfg.size[1]) * int64(cfg.size[2]) * 4
	rep := report{
		Workload: "collperf", Case: fmt.Sprintf("%d×%d×%d int32", cfg.size[0], cfg.size[1], cfg.size[2]),
		Label: cfg.label, Time: time.Now().Format(time.RFC3339), Command: os.Args,
		NP: np, Grid: grid, Size: cfg.size, Bytes: total, Dir: cfg.dir, FS: benchutil.FSType(cfg.dir),
		Hints: cfg.hints, HintFrom: cfg.hintSrc, Iters: cfg.iters,
		Busy: cfg.busy,
	}
	rep.Host, _ = os.Hostname()
	if abs, err := filepath.Abs(cfg.dir); err == nil {
		rep.Dir = abs
	}
	// Fail early, on every rank, if rank 0 cannot write the JSON file.
	if cfg.jsonPath != "" {
		var bad int64
		if rank == 0 {
			if err := os.WriteFile(cfg.jsonPath, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "collperf: -json:", err)
				bad = 1
			}
		}
		agree := []int64{bad}
		if err := world.AllreduceInt64(agree, agree, comm.OpMax); err != nil || agree[0] != 0 {
			return 2
		}
	}
	if rank == 0 && !cfg.quiet {
		fmt.Printf("collperf: %d ranks, array %dx%dx%d int32 = %.1f MiB, grid %dx%dx%d, %d repetition(s), dir %s (%s)\n",
			np, cfg.size[0], cfg.size[1], cfg.size[2], float64(total)/(1<<20), grid[0], grid[1], grid[2], cfg.iters, rep.Dir, rep.FS)
		if len(cfg.hints) > 0 {
			fmt.Printf("collperf: hints %s\n", benchutil.FormatHints(cfg.hints))
		}
	}
	if cfg.overlap != nil {
		return runOverlap(world, cfg, blk, &rep)
	}
	buf := make([]byte, 4*blk.elements())
	failed := false
	// Progress on rank 0 for long runs: the operation under way and the
	// share of the writes and reads done.
	prog := benchutil.NewProgress("collperf", rank == 0 && !cfg.quiet)
	done, steps := int64(0), int64(2*cfg.iters*len(cfg.impls))
	if cfg.phases > 0 {
		steps = int64((cfg.phases + 1) * len(cfg.impls) * len(cfg.computes))
	}
	runs := make([]*implRun, len(cfg.impls))
	for i, kind := range cfg.impls {
		runs[i] = newImplRun(cfg, world, kind)
	}
	// finish reports an implementation's peak RSS (max and min over ranks;
	// the reset flag is true only if every rank could reset) and removes
	// its file.
	finish := func(r *implRun) bool {
		var err error
		if r.info.PeakRSSMax, r.info.PeakRSSMin, r.info.RSSReset, err = benchutil.PeakRSSOver(world, r.reset); err != nil {
			fmt.Fprintln(os.Stderr, "collperf:", err)
			return false
		}
		rep.Impls = append(rep.Impls, r.info)
		if !cfg.keep && rank == 0 {
			if r.kind == "collio" {
				collio.Delete(r.path) // with its driver prefix (sim keeps side files)
			} else {
				os.Remove(r.path)
			}
		}
		return true
	}
	// fail reports r's error and skips its remaining repetitions.
	fail := func(r *implRun, err error) {
		msg := fmt.Sprintf("%s: %v", r.info.Impl, err)
		if rank == 0 {
			fmt.Fprintln(os.Stderr, "collperf:", msg)
		}
		rep.Errors = append(rep.Errors, msg)
		failed = true
		r.failed = true
	}
	// runRep runs repetition it of r and records its results and error.
	runRep := func(r *implRun, it int) {
		if r.failed {
			return
		}
		o := op{impl: r.info.Impl, kind: r.kind, iter: it, noSync: cfg.noSync, progress: func(phase string) {
			prog.Update(fmt.Sprintf("%s %s rep %d/%d", r.info.Impl, phase, it, cfg.iters), done, steps)
			done++
		}}
		var rs []benchutil.Result
		var err error
		if cfg.phases > 0 {
			for _, cd := range cfg.computes {
				var prs []benchutil.Result
				var pr *phaseRun
				pr, prs, err = runPhases(world, cfg, cd, r.w, o, r.path, blk, total, buf)
				rs = append(rs, prs...)
				if pr != nil {
					rep.Phases = append(rep.Phases, pr)
				}
				if err != nil {
					break
				}
			}
		} else {
			rs, err = measure(world, r.w, o, r.path, cfg.size, blk, total, buf)
		}
		for _, res := range rs {
			if res.Info != nil && r.info.EffectiveHints == nil {
				r.info.EffectiveHints = res.Info
			}
		}
		rep.Results = append(rep.Results, rs...)
		if err != nil {
			fail(r, err)
		}
	}
	iters := cfg.iters
	if cfg.phases > 0 {
		iters = 1 // the phases are the repetitions
	}
	// warm writes and reads r's file once, untimed and unreported (but
	// verified), before its repetitions.
	warm := func(r *implRun) {
		if !cfg.warmup || cfg.phases > 0 || r.failed {
			return
		}
		o := op{impl: r.info.Impl, kind: r.kind, iter: 0, noSync: cfg.noSync}
		if _, err := measure(world, r.w, o, r.path, cfg.size, blk, total, buf); err != nil {
			fail(r, fmt.Errorf("warm-up: %w", err))
		}
	}
	if cfg.interleave {
		// Repetition by repetition, so that every implementation meets
		// the same machine state; peak RSS is then the launch's.
		reset := benchutil.ResetPeakRSS()
		for _, r := range runs {
			r.reset = reset
			warm(r)
		}
		for it := 1; it <= iters; it++ {
			for _, r := range runs {
				runRep(r, it)
			}
		}
		for _, r := range runs {
			if !finish(r) {
				return 1
			}
		}
	} else {
		for _, r := range runs {
			r.reset = benchutil.ResetPeakRSS()
			warm(r)
			for it := 1; it <= iters; it++ {
				runRep(r, it)
			}
			if !finish(r) {
				return 1
			}
		}
	}
	prog.Done()
	if rank == 0 {
		if !cfg.quiet {
			benchutil.PrintTable(os.Stdout, rep.Results)
			benchutil.PrintBreakdown(os.Stdout, rep.Results)
			benchutil.PrintMemory(os.Stdout, rep.Impls, rep.Results)
			if len(rep.Phases) > 0 {
				printPhases(os.Stdout, rep.Phases)
			}
		}
		if cfg.jsonPath != "" {
			if err := benchutil.WriteJSON(cfg.jsonPath, rep); err != nil {
				fmt.Fprintln(os.Stderr, "collperf:", err)
				failed = true
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}
