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
	"time"

	"github.com/collio/collio/cmd/collio/internal/place"
	"github.com/collio/collio/cmd/collio/internal/simmodel"
	"github.com/collio/collio/driver/sim"
)

const simUsage = `usage: collio sim [options]

sim is a scale model with time. For each pattern, rank count, placement
and strategy it runs the strategy's real planning and exchange on the
in-memory communicator (goroutines as ranks) with the ranks mapped onto
nodes by the placement, counts every rank's messages and bytes per phase
(split by whether they cross nodes), records the aggregators' file
writes, and applies a LogGP-style network model and the sim driver's
storage model to them. It prints modelled time per phase next to the
messages, bytes and bytes crossing nodes.

-source matrix models only two-phase's data exchange, from the
application matrix that collio place builds (no ranks are run), so that
it reaches rank counts whose in-memory run would not fit in memory.

Options:
`

// simFlags are the inputs of collio sim.
type simFlags struct {
	ranks           []int
	cores, cbNodes  int
	local, global   int
	patterns        []string
	strategies      []string
	placements      []string
	source, domains string
	cb, stripe      int64
	sizes           place.Sizes
	net             simmodel.Network
	fs              sim.Params
	threshold       float64
	md              string
	timeout         time.Duration
	fsSizes         string
	// storageViaNIC: the storage is reached over the nodes' interfaces
	// (modelStorage).
	storageViaNIC bool
}

func simCmd(args []string, stdout, stderr io.Writer) int {
	f, err := parseSimFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "collio sim: %v\n", err)
		return 2
	}
	if err := f.run(stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "collio sim: %v\n", err)
		return 1
	}
	return 0
}

func parseSimFlags(args []string, stderr io.Writer) (*simFlags, error) {
	f := &simFlags{sizes: place.DefaultSizes(), net: simmodel.DefaultNetwork(), fs: sim.DefaultParams()}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simUsage); fs.PrintDefaults() }
	ranks := fs.String("ranks", "1024,4096", "rank counts")
	fs.IntVar(&f.cores, "cores-per-node", 64, "ranks per node (each rank count must be a multiple)")
	pats := fs.String("patterns", "e3sm,btio,s3d,coll_perf", "access patterns: "+strings.Join(place.Benchmarks, ", "))
	strats := fs.String("strategies", "twophase,tam", "strategies (collio_strategy values): twophase, static, dynamic (OMPIO's segmentation), tam")
	places := fs.String("placements", "byslot,bynode,setmatch", "rank placements: byslot, bynode, setmatch")
	fs.StringVar(&f.source, "source", "run", "run: run the strategies in memory; matrix: two-phase's data exchange from the application matrix")
	fs.StringVar(&f.domains, "domains", "even", "two-phase's file domains: even (ROMIO's) or affinity (collio's default, blocks to their main writer's aggregator)")
	cb := fs.String("cb_buffer_size", "16m", "bytes per aggregator per round")
	fs.IntVar(&f.cbNodes, "cb_nodes", 0, "aggregators (0: one per node)")
	fs.IntVar(&f.local, "local", 0, "TAM: local aggregators per node (0: TAM's default ceil(512/nodes))")
	fs.IntVar(&f.global, "global", 0, "global aggregators with stripe-cyclic domains as on Lustre (0: -cb_nodes and even domains)")
	stripe := fs.String("stripe", "1m", "stripe size of -global's domains")
	fs.Float64Var(&f.threshold, "threshold", place.DefaultMinFraction, "SetMatch ignores matrix entries below this fraction of the largest")
	fs.IntVar(&f.sizes.E3SMCells, "e3sm-cells", f.sizes.E3SMCells, "E3SM: cells per rank")
	fs.Float64Var(&f.sizes.E3SMSeg, "e3sm-seg", f.sizes.E3SMSeg, "E3SM: mean segment length, cells (geometric)")
	fs.IntVar(&f.sizes.E3SMLev, "e3sm-lev", f.sizes.E3SMLev, "E3SM: levels per variable")
	fs.IntVar(&f.sizes.E3SMVars, "e3sm-vars", f.sizes.E3SMVars, "E3SM: variables")
	fs.IntVar(&f.sizes.E3SMStride, "e3sm-stride", f.sizes.E3SMStride, "E3SM: file interleave of SFC segments")
	fs.Uint64Var(&f.sizes.Seed, "seed", f.sizes.Seed, "E3SM: random seed of the decomposition")
	fs.IntVar(&f.sizes.BTIOSide, "btio-n", f.sizes.BTIOSide, "BTIO: array side (multiple of sqrt(ranks))")
	fs.IntVar(&f.sizes.S3DSide, "s3d-n", f.sizes.S3DSide, "S3D: mesh side (divisible by the process grid)")
	fs.IntVar(&f.sizes.CollPerfSide, "coll_perf-n", f.sizes.CollPerfSide, "coll_perf: array side in int32")
	fs.DurationVar(&f.net.Inter.Latency, "net-latency", f.net.Inter.Latency, "network: latency L between nodes")
	fs.DurationVar(&f.net.Inter.Overhead, "net-overhead", f.net.Inter.Overhead, "network: per-message overhead o between nodes")
	fs.Float64Var(&f.net.Inter.BytesPerSec, "net-bw", f.net.Inter.BytesPerSec, "network: bytes/s of one rank between nodes (1/G)")
	fs.Float64Var(&f.net.NICBytesPerSec, "nic-bw", f.net.NICBytesPerSec, "network: bytes/s of a node's interface, each way, shared by its ranks")
	fs.DurationVar(&f.net.Intra.Latency, "shm-latency", f.net.Intra.Latency, "within a node: latency")
	fs.DurationVar(&f.net.Intra.Overhead, "shm-overhead", f.net.Intra.Overhead, "within a node: per-message overhead")
	fs.Float64Var(&f.net.Intra.BytesPerSec, "shm-bw", f.net.Intra.BytesPerSec, "within a node: bytes/s of one rank")
	fs.StringVar(&f.fsSizes, "fs-stripe", fmt.Sprintf("%d:%d", f.fs.StripeSize, f.fs.StripeCount), "storage: stripe size and count, SIZE:COUNT")
	fs.Int64Var(&f.fs.Bandwidth, "fs-bw", f.fs.Bandwidth, "storage: bytes/s per target")
	fs.DurationVar(&f.fs.Latency, "fs-latency", f.fs.Latency, "storage: latency per request and target")
	fs.DurationVar(&f.fs.LockLatency, "fs-lock-latency", f.fs.LockLatency, "storage: cost of revoking a stripe lock")
	fs.BoolVar(&f.storageViaNIC, "storage-via-nic", false, "storage: the aggregators' writes leave their node through its interface (-nic-bw), as on a cluster whose file servers are on the same network; the write phase then takes at least the busiest node's written bytes at -nic-bw")
	fs.StringVar(&f.md, "md", "", "also write the tables to this markdown file")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Minute, "abort one in-memory run after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if f.ranks, err = positiveInts("ranks", *ranks); err != nil {
		return nil, err
	}
	if f.cores < 1 {
		return nil, fmt.Errorf("-cores-per-node %d; need at least 1", f.cores)
	}
	for _, n := range f.ranks {
		if n%f.cores != 0 {
			return nil, fmt.Errorf("-ranks %d is not a multiple of -cores-per-node %d", n, f.cores)
		}
	}
	f.patterns, f.strategies, f.placements = split(*pats), split(*strats), split(*places)
	if err := oneOf("pattern", f.patterns, place.Benchmarks); err != nil {
		return nil, err
	}
	if err := oneOf("strategy", f.strategies, []string{"twophase", "static", "dynamic", "tam"}); err != nil {
		return nil, err
	}
	if err := oneOf("placement", f.placements, []string{"byslot", "bynode", "setmatch"}); err != nil {
		return nil, err
	}
	if f.domains != "even" && f.domains != "affinity" {
		return nil, fmt.Errorf("-domains %q: want even or affinity", f.domains)
	}
	if f.domains == "affinity" && f.global > 0 {
		return nil, fmt.Errorf("-domains affinity and -global exclude each other (stripe-cyclic domains)")
	}
	switch f.source {
	case "run":
	case "matrix":
		if !slices.Equal(f.strategies, []string{"twophase"}) {
			return nil, fmt.Errorf("-source matrix models two-phase only: give -strategies twophase")
		}
		if f.global > 0 || f.domains != "even" {
			return nil, fmt.Errorf("-source matrix models even file domains, not -global's stripe-cyclic or affinity ones")
		}
	default:
		return nil, fmt.Errorf("-source %q: want run or matrix", f.source)
	}
	if f.cb, err = sizeFlag("cb_buffer_size", *cb); err != nil {
		return nil, err
	}
	if f.stripe, err = sizeFlag("stripe", *stripe); err != nil {
		return nil, err
	}
	if f.cb < 1 || f.stripe < 1 || f.cbNodes < 0 || f.global < 0 || f.local < 0 {
		return nil, fmt.Errorf("-cb_buffer_size and -stripe must be positive, -cb_nodes, -global and -local not negative")
	}
	size, count, ok := strings.Cut(f.fsSizes, ":")
	if !ok {
		return nil, fmt.Errorf("-fs-stripe %q: want SIZE:COUNT", f.fsSizes)
	}
	if f.fs.StripeSize, err = sizeFlag("fs-stripe", size); err != nil {
		return nil, err
	}
	if f.fs.StripeCount, err = strconv.Atoi(count); err != nil {
		return nil, fmt.Errorf("-fs-stripe %q: stripe count %q is not a number", f.fsSizes, count)
	}
	if err := f.fs.Check(); err != nil {
		return nil, err
	}
	if err := f.net.Check(); err != nil {
		return nil, err
	}
	return f, nil
}

func positiveInts(name, s string) ([]int, error) {
	var out []int
	for _, p := range split(s) {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive integer", name, p)
		}
		out = append(out, v)
	}
	return out, nil
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func oneOf(what string, got, known []string) error {
	if len(got) == 0 {
		return fmt.Errorf("no %s given", what)
	}
	for _, g := range got {
		if !slices.Contains(known, g) {
			return fmt.Errorf("unknown %s %q (want %s)", what, g, strings.Join(known, ", "))
		}
	}
	return nil
}

func (f *simFlags) run(stdout, stderr io.Writer) error {
	start := time.Now()
	runs, err := f.simulate(stderr)
	if err != nil {
		return err
	}
	out := f.render(runs, time.Since(start))
	fmt.Fprint(stdout, out)
	if f.md != "" {
		if err := os.WriteFile(f.md, []byte(out), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.md, err)
		}
	}
	return nil
}

// simulate models every combination of the flags, logging progress.
func (f *simFlags) simulate(progress io.Writer) ([]simRun, error) {
	var runs []simRun
	for _, name := range f.patterns {
		for _, n := range f.ranks {
			acc, what, err := place.Bench(name, n, f.sizes)
			if err != nil {
				return nil, err
			}
			arch := place.Arch{Nodes: n / f.cores, CoresPerNode: f.cores}
			prob, err := place.NewProblem(acc, arch, f.cbNodes, place.Domains{})
			if err != nil {
				return nil, err
			}
			for _, pl := range f.placements {
				m, took, err := f.mapping(prob, pl, n, arch)
				if err != nil {
					return nil, err
				}
				for _, s := range f.strategies {
					sr := simRun{pattern: what, name: name, ranks: n, nodes: arch.Nodes, placement: pl, strategy: s, placeTime: took}
					t0 := time.Now()
					if f.source == "matrix" {
						err = f.fromMatrix(&sr, prob, m)
					} else {
						err = f.inMemory(&sr, acc, prob, m)
					}
					if err != nil {
						return nil, fmt.Errorf("%s, %d ranks, %s, %s: %w", name, n, pl, s, err)
					}
					sr.wall = time.Since(t0)
					fmt.Fprintf(progress, "%-9s %5d ranks %-8s %-15s %v\n", name, n, pl, s, sr.wall.Round(time.Millisecond))
					runs = append(runs, sr)
					runtime.GC()
				}
			}
		}
	}
	return runs, nil
}

// mapping places the ranks; for SetMatch it also reports how long the
// algorithm took.
func (f *simFlags) mapping(p *place.Problem, name string, n int, a place.Arch) (place.Mapping, time.Duration, error) {
	switch name {
	case "byslot":
		return place.BySlot(n, a), 0, nil
	case "bynode":
		return place.ByNode(n, a), 0, nil
	}
	t0 := time.Now()
	m, err := p.SetMatch(f.threshold)
	return m, time.Since(t0), err
}
