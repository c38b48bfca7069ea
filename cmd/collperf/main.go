// Command collperf is a coll_perf-style benchmark: a 3-D array of int32
// block-distributed over a 3-D grid of ranks, each rank's block described by
// a subarray file view, written with a collective write and read back with a
// collective read, every value verified. It runs the same workload through
// collio and through the host MPI's own MPI-IO and prints bandwidth and a
// timing breakdown (the slowest rank's time in each phase).
//
//	mpirun -np 4 collperf -dir /scratch/tmp -size 256
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/mpi"
)

func init() { runtime.LockOSThread() } // MPI calls from the main thread

type config struct {
	dir      string
	size     [3]int
	impls    []string
	hints    collio.Hints
	jsonPath string
	keep     bool
	iters    int
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "collperf:", err)
		os.Exit(2)
	}
	os.Exit(run(cfg))
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("collperf", flag.ContinueOnError)
	var c config
	var size, impls, hints string
	fs.StringVar(&c.dir, "dir", "", "directory for the test file (required; use a parallel file system on a cluster)")
	fs.StringVar(&size, "size", "256", "global array size: N (N×N×N) or X,Y,Z, in int32 elements")
	fs.StringVar(&impls, "impl", "collio,mpiio", "comma-separated implementations: collio, mpiio (the host MPI-IO)")
	fs.StringVar(&hints, "hints", "", "hints as key=value,key=value (given to both implementations)")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file (rank 0)")
	fs.BoolVar(&c.keep, "keep", false, "keep the test files")
	fs.IntVar(&c.iters, "i", 1, "repetitions of each write and read")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.dir == "" {
		return c, fmt.Errorf("-dir is required")
	}
	if c.iters < 1 {
		return c, fmt.Errorf("-i %d: need at least one repetition", c.iters)
	}
	var err error
	if c.size, err = parseSize(size); err != nil {
		return c, err
	}
	for _, s := range strings.Split(impls, ",") {
		switch s = strings.TrimSpace(s); s {
		case "collio", "mpiio":
			c.impls = append(c.impls, s)
		default:
			return c, fmt.Errorf("-impl %q: allowed values are collio, mpiio", s)
		}
	}
	c.hints = collio.Hints{}
	if hints != "" {
		for _, kv := range strings.Split(hints, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return c, fmt.Errorf("-hints: %q is not key=value", kv)
			}
			c.hints[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
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
	for i, p := range parts {
		if _, err := fmt.Sscan(strings.TrimSpace(p), &g[i]); err != nil || g[i] < 1 {
			return g, fmt.Errorf("-size %q: %q is not a positive integer", s, p)
		}
	}
	return g, nil
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
	if rank == 0 {
		fmt.Printf("collperf: %d ranks, array %dx%dx%d int32 = %.1f MiB, grid %dx%dx%d, %d repetition(s), dir %s\n",
			np, cfg.size[0], cfg.size[1], cfg.size[2], float64(total)/(1<<20), grid[0], grid[1], grid[2], cfg.iters, cfg.dir)
		if io := os.Getenv("OMPI_MCA_io"); io != "" {
			fmt.Printf("collperf: host MPI-IO component: %s\n", io)
		}
	}
	var results []result
	failed := false
	for _, impl := range cfg.impls {
		path := filepath.Join(cfg.dir, "collperf."+impl)
		var w workload
		switch impl {
		case "collio":
			w = &collioWorkload{comm: world, hints: cfg.hints}
		case "mpiio":
			w = &hostWorkload{comm: mpi.World(), hints: cfg.hints}
		}
		for it := 0; it < cfg.iters; it++ {
			rs, err := measure(world, w, path, cfg.size, blk, total)
			results = append(results, rs...)
			if err != nil {
				if rank == 0 {
					fmt.Fprintf(os.Stderr, "collperf: %s: %v\n", impl, err)
				}
				failed = true
				break
			}
		}
		if !cfg.keep && rank == 0 {
			os.Remove(path)
		}
	}
	if rank == 0 {
		printTable(os.Stdout, results)
		if cfg.jsonPath != "" {
			if err := writeJSON(cfg.jsonPath, results); err != nil {
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

func writeJSON(path string, results []result) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
