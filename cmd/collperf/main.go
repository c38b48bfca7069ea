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
// "key value" lines), in command-line order: a key given again wins.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio"
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
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	var help usageError
	switch {
	case errors.As(err, &help):
		if launchRank() == 0 {
			fmt.Print(help.usage)
		}
		os.Exit(0)
	case err != nil:
		if launchRank() == 0 {
			fmt.Fprintf(os.Stderr, "collperf: %v (collperf -h lists the flags)\n", err)
		}
		os.Exit(2)
	}
	os.Exit(run(cfg))
}

// launchRank is this process's rank as the launcher tells it, before MPI
// is initialised (0 when unknown), so that only one rank prints flag
// errors.
func launchRank() int {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"} {
		if r, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return r
		}
	}
	return 0
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("collperf", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, usage printed by main on -h
	var c config
	var size, impls string
	hs := newHintSet()
	fs.StringVar(&c.dir, "dir", "", "directory for the test file (required; use a parallel file system on a cluster)")
	fs.StringVar(&size, "size", "256", "global array size: N (N×N×N) or X,Y,Z, in int32 elements")
	fs.StringVar(&impls, "impl", "collio,mpiio", "comma-separated implementations: collio, mpiio (the host MPI-IO; choose its component with mpirun --mca io/fcoll)")
	fs.Func("hints", "hints as key=value,key=value (a piece without '=' continues the previous value); given to both implementations", func(s string) error {
		kvs, err := parseHintList(s)
		for _, kv := range kvs {
			hs.set(kv[0], kv[1], "-hints")
		}
		return err
	})
	fs.Func("hint", "one hint as key=value (repeatable)", func(s string) error {
		k, v, err := parseHintPair(s)
		if err == nil {
			hs.set(k, v, "-hint")
		}
		return err
	})
	fs.Func("hintfile", "file of hints in ROMIO's format: \"key value\" per line, # comments (repeatable)", func(path string) error {
		kvs, err := readHintFile(path)
		for _, kv := range kvs {
			hs.set(kv[0], kv[1], "-hintfile "+path)
		}
		return err
	})
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file (rank 0)")
	fs.StringVar(&c.label, "label", "", "free-form label stored in the JSON (benchmark scripts name the run or storage with it)")
	fs.BoolVar(&c.keep, "keep", false, "keep the test files")
	fs.BoolVar(&c.quiet, "q", false, "quiet: print nothing but errors")
	fs.IntVar(&c.iters, "i", 1, "repetitions of each write and read")
	fs.StringVar(&c.name, "name", "collio", "label of the collio implementation in tables and JSON (benchmark scripts tell variants apart with it)")
	fs.StringVar(&c.driver, "driver", "", "collio driver for the test file (e.g. sim for the emulated striped file system); default: detected. Only with -impl collio")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: mpirun -np N collperf -dir DIR [flags]\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return c, usageError{b.String()}
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
	if strings.ContainsAny(c.label, "\n\r") {
		return c, fmt.Errorf("-label: must be one line")
	}
	var err error
	if c.size, err = parseSize(size); err != nil {
		return c, err
	}
	if c.impls, err = parseImpls(impls); err != nil {
		return c, err
	}
	if c.driver != "" && slices.Contains(c.impls, "mpiio") {
		return c, fmt.Errorf("-driver %s: the host MPI-IO cannot use collio drivers; add -impl collio", c.driver)
	}
	c.hints, c.hintSrc = collio.Hints(hs.vals), hs.source
	return c, nil
}

// usageError is returned for -h: the text to print.
type usageError struct{ usage string }

func (e usageError) Error() string { return "help requested" }

func parseImpls(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		switch name = strings.TrimSpace(name); name {
		case "collio", "mpiio":
			if slices.Contains(out, name) {
				return nil, fmt.Errorf("-impl %q: %s given twice (use -i for repetitions)", s, name)
			}
			out = append(out, name)
		default:
			return nil, fmt.Errorf("-impl %q: %q is not an implementation; allowed: collio, mpiio", s, name)
		}
	}
	return out, nil
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

// hostLabel names the host MPI-IO component selected through Open MPI's
// MCA environment (mpirun --mca io X --mca fcoll Y sets OMPI_MCA_io and
// OMPI_MCA_fcoll in every rank): mpiio:ompio/vulcan, mpiio:romio321,
// mpiio:default when nothing is selected.
func hostLabel(getenv func(string) string) string {
	ioc, fcoll := getenv("OMPI_MCA_io"), getenv("OMPI_MCA_fcoll")
	switch {
	case ioc == "" && fcoll == "":
		return "mpiio:default"
	case strings.Contains(ioc, "romio"):
		return "mpiio:" + ioc // fcoll is OMPIO's; ROMIO ignores it
	case ioc == "":
		return "mpiio:default/" + fcoll
	case fcoll == "":
		return "mpiio:" + ioc
	}
	return "mpiio:" + ioc + "/" + fcoll
}

// report is the JSON document (-json).
type report struct {
	Label    string            `json:"label,omitempty"`
	Time     string            `json:"time"`
	Host     string            `json:"host"` // rank 0's
	Command  []string          `json:"command"`
	NP       int               `json:"np"`
	Grid     [3]int            `json:"grid"`
	Size     [3]int            `json:"size"`
	Bytes    int64             `json:"bytes"`
	Dir      string            `json:"dir"`
	FS       string            `json:"fs"`
	Hints    map[string]string `json:"hints"`
	HintFrom map[string]string `json:"hint_sources,omitempty"`
	Iters    int               `json:"iters"`
	Impls    []implInfo        `json:"impls"`
	Results  []result          `json:"results"`
	Errors   []string          `json:"errors,omitempty"`
}

// implInfo is what is measured once per implementation: peak RSS per rank
// (max and min over ranks) and the effective hints.
type implInfo struct {
	Impl       string            `json:"impl"`
	Kind       string            `json:"kind"`
	MCA        map[string]string `json:"mca,omitempty"`
	PeakRSSMax int64             `json:"peak_rss_max_bytes"` // VmHWM; -1 unknown
	PeakRSSMin int64             `json:"peak_rss_min_bytes"`
	// RSSReset tells whether the peak was reset before this
	// implementation ran; if not, it covers the process since its start.
	RSSReset       bool              `json:"peak_rss_reset"`
	EffectiveHints map[string]string `json:"effective_hints,omitempty"`
}

func run(cfg config) int {
	world, err := collio.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, "collperf:", err)
		return 1
	}
	defer collio.Finalize()
	rank, np := world.Rank(), world.Size()
	grid := dimsCreate(np)
	blk, err := decompose(cfg.size, grid, rank)
	if err != nil {
		fmt.Fprintln(os.Stderr, "collperf:", err)
		return 1
	}
	total := int64(cfg.size[0]) * int64(cfg.size[1]) * int64(cfg.size[2]) * 4
	rep := report{
		Label: cfg.label, Time: time.Now().Format(time.RFC3339), Command: os.Args,
		NP: np, Grid: grid, Size: cfg.size, Bytes: total, Dir: cfg.dir, FS: fsType(cfg.dir),
		Hints: cfg.hints, HintFrom: cfg.hintSrc, Iters: cfg.iters,
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
			fmt.Printf("collperf: hints %s\n", formatHints(cfg.hints))
		}
	}
	buf := make([]byte, 4*blk.elements())
	failed := false
	for _, kind := range cfg.impls {
		path := filepath.Join(cfg.dir, "collperf."+kind)
		info := implInfo{Impl: kind, Kind: kind}
		var w workload
		switch kind {
		case "collio":
			if cfg.driver != "" {
				path = cfg.driver + ":" + path
			}
			info.Impl = cfg.name
			w = &collioWorkload{comm: world, hints: cfg.hints}
		case "mpiio":
			w = &hostWorkload{comm: mpi.World(), hints: cfg.hints}
			info.Impl = hostLabel(os.Getenv)
			info.MCA = map[string]string{}
			for _, k := range []string{"io", "fcoll", "fbtl", "fs", "sharedfp"} {
				if v := os.Getenv("OMPI_MCA_" + k); v != "" {
					info.MCA[k] = v
				}
			}
		}
		reset := resetPeakRSS()
		for it := 1; it <= cfg.iters; it++ {
			rs, err := measure(world, w, op{impl: info.Impl, kind: kind, iter: it}, path, cfg.size, blk, total, buf)
			for _, r := range rs {
				if r.info != nil && info.EffectiveHints == nil {
					info.EffectiveHints = r.info
				}
			}
			rep.Results = append(rep.Results, rs...)
			if err != nil {
				msg := fmt.Sprintf("%s: %v", info.Impl, err)
				if rank == 0 {
					fmt.Fprintln(os.Stderr, "collperf:", msg)
				}
				rep.Errors = append(rep.Errors, msg)
				failed = true
				break
			}
		}
		// Peak RSS: max and min over ranks (min as -max(-x)); the reset
		// flag is true only if every rank could reset.
		rss := peakRSS()
		okReset := int64(0)
		if reset {
			okReset = 1
		}
		mx := []int64{rss, -rss, -okReset}
		if err := world.AllreduceInt64(mx, mx, comm.OpMax); err != nil {
			fmt.Fprintln(os.Stderr, "collperf:", err)
			return 1
		}
		info.PeakRSSMax, info.PeakRSSMin, info.RSSReset = mx[0], -mx[1], mx[2] == -1
		rep.Impls = append(rep.Impls, info)
		if !cfg.keep && rank == 0 {
			os.Remove(path)
		}
	}
	if rank == 0 {
		if !cfg.quiet {
			printTable(os.Stdout, rep.Results)
			printBreakdown(os.Stdout, rep.Results)
			printMemory(os.Stdout, rep.Impls, rep.Results)
		}
		if cfg.jsonPath != "" {
			if err := writeJSON(cfg.jsonPath, rep); err != nil {
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

func formatHints(h map[string]string) string {
	keys := slices.Sorted(maps.Keys(h))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + h[k]
	}
	return strings.Join(parts, " ")
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
