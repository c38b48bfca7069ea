// Command tamscale compares the message traffic of two-phase collective
// writes (package twophase) with two-layer aggregation (package tam) on
// E3SM-, BTIO- and S3D-like access patterns (testdata/patterns/README.md),
// at thousands of in-memory ranks grouped into virtual nodes. Every rank's
// communicator is wrapped by comm.Counting; the file discards writes, so
// only the exchange is measured. It prints a markdown table: messages
// received per global aggregator, total messages and bytes, and the
// (offset, length) requests before and after the local aggregators'
// coalescing.
//
//	go run ./cmd/tamscale
//	go run ./cmd/tamscale -ranks 4096 -nodes 64 -patterns btio -md out.md
//	go run ./cmd/tamscale -global 16 -stripe 1048576   # Lustre-like: 16 stripe-cyclic aggregators
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
	"github.com/collio/collio/tam"
	"github.com/collio/collio/topo"
	"github.com/collio/collio/twophase"
)

type options struct {
	ranks, nodes, local []int
	patterns            []string
	strategies          []string
	cb                  int64
	global              int   // 0: one global aggregator per node, generic domains; >0: that many, stripe-cyclic
	stripe              int64 // stripe size with -global > 0
	sizes               patternSizes
	md                  string
	timeout             time.Duration
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tamscale:", err)
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tamscale:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("tamscale", flag.ContinueOnError)
	o := &options{}
	ranks := fs.String("ranks", "256,1024,4096", "rank counts")
	nodes := fs.String("nodes", "16,64", "virtual node counts (each must divide the rank count)")
	local := fs.String("local", "0", "local aggregators per node (0: TAM's default ceil(512/nodes))")
	pats := fs.String("patterns", "e3sm,btio,s3d", "access patterns")
	strats := fs.String("strategies", "twophase,tam", "strategies")
	fs.Int64Var(&o.cb, "cb", 16<<20, "cb_buffer_size, bytes per global aggregator per round")
	fs.IntVar(&o.global, "global", 0, "global aggregators: 0 = one per node (ROMIO's *:1, even file domains); N > 0 = N, stripe-cyclic domains as on Lustre with N stripes")
	fs.Int64Var(&o.stripe, "stripe", 1<<20, "stripe size with -global > 0")
	fs.IntVar(&o.sizes.e3smCells, "e3sm-cells", 32, "E3SM: cells per rank")
	fs.Float64Var(&o.sizes.e3smSeg, "e3sm-seg", 3, "E3SM: mean segment length, cells (geometric)")
	fs.IntVar(&o.sizes.e3smLev, "e3sm-lev", 4, "E3SM: levels per variable")
	fs.IntVar(&o.sizes.e3smVars, "e3sm-vars", 2, "E3SM: variables")
	fs.IntVar(&o.sizes.e3smStride, "e3sm-stride", 16, "E3SM: file interleave of SFC segments")
	fs.Uint64Var(&o.sizes.seed, "seed", 1, "E3SM: random seed of the decomposition")
	fs.IntVar(&o.sizes.btioN, "btio-n", 128, "BTIO: array side (multiple of sqrt(ranks))")
	fs.IntVar(&o.sizes.s3dN, "s3d-n", 64, "S3D: mesh side (divisible by the process grid)")
	fs.StringVar(&o.md, "md", "", "also write the table to this markdown file")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "abort a run after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if o.ranks, err = ints(*ranks); err != nil {
		return nil, err
	}
	if o.nodes, err = ints(*nodes); err != nil {
		return nil, err
	}
	if o.local, err = ints(*local); err != nil {
		return nil, err
	}
	o.patterns = strings.Split(*pats, ",")
	o.strategies = strings.Split(*strats, ",")
	for _, s := range o.strategies {
		if s != "twophase" && s != "tam" {
			return nil, fmt.Errorf("unknown strategy %q", s)
		}
	}
	if o.sizes.e3smSeg < 1 {
		return nil, fmt.Errorf("-e3sm-seg must be at least 1")
	}
	return o, nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// row is one line of the table.
type row struct {
	pattern              string
	ranks, nodes         int
	strategy             string
	pl, pg, rounds       int
	gaMax                int64
	gaMean               float64
	gaL2Mean             float64 // TAM: layer-2 part of gaMean
	msgs, bytes, bytesL1 int64   // bytesL1: TAM's intra-node layer
	before, after        int64
	elapsed              time.Duration
}

func run(o *options, w io.Writer) error {
	var rows []row
	start := time.Now()
	for _, name := range o.patterns {
		for _, p := range o.ranks {
			pt, err := makePattern(name, p, o.sizes)
			if err != nil {
				return err
			}
			for _, nn := range o.nodes {
				if nn <= 0 || p%nn != 0 {
					return fmt.Errorf("%d nodes do not divide %d ranks", nn, p)
				}
				for _, s := range o.strategies {
					locals := o.local
					if s == "twophase" {
						locals = []int{0}
					}
					for _, l := range locals {
						rw, err := measure(o, pt, p, nn, s, l)
						if err != nil {
							return fmt.Errorf("%s, %d ranks, %d nodes, %s: %w", name, p, nn, s, err)
						}
						fmt.Fprintf(os.Stderr, "%-5s %5d ranks %3d nodes %-8s %v\n", pt.name, p, nn, s, rw.elapsed.Round(time.Millisecond))
						rows = append(rows, rw)
						runtime.GC()
					}
				}
			}
		}
	}
	table := render(o, rows, time.Since(start))
	fmt.Fprint(w, table)
	if o.md != "" {
		return os.WriteFile(o.md, []byte(table), 0o644)
	}
	return nil
}

// measure runs one collective write of pattern pt on p in-memory ranks in
// nn virtual nodes with the given strategy.
func measure(o *options, pt *pattern, p, nn int, strategy string, perNode int) (row, error) {
	nodeSize := p / nn
	nodes := topo.Virtual(p, nodeSize)
	ranges := make([]coll.Range, p)
	for r, bs := range pt.blocks {
		if len(bs) > 0 {
			ranges[r] = coll.Range{Start: bs[0].off, End: bs[len(bs)-1].off + bs[len(bs)-1].n}
		}
	}
	var aggs []int
	var stripeCount int
	if o.global > 0 {
		per := (o.global + nn - 1) / nn
		aggs, _ = topo.Aggregators(nodes, o.global, []hints.ConfigEntry{{Host: hints.AnyHost, Count: per}})
		stripeCount = o.global
	} else {
		aggs, _ = topo.Aggregators(nodes, 0, nil)
	}
	cfg := tam.NewConfig(nodes, perNode)
	k := comm.NewCounters()
	stats := make([]metrics.Call, p)
	reps := make([]tam.Report, p)
	phase := "twophase"
	t0 := time.Now()
	err := comm.RunWorldTimeout(p, nodeSize, o.timeout, func(c comm.Comm) error {
		c = comm.Counting(c, k)
		r := c.Rank()
		a, err := access(pt.blocks[r])
		if err != nil {
			return err
		}
		j := &coll.Job{Comm: c, File: discard{}, Aggregators: aggs, Ranges: ranges, Access: a,
			BufSize: o.cb, Stats: &stats[r]}
		if stripeCount > 0 {
			j.Stripe, j.StripeCount, j.CoRatio = o.stripe, stripeCount, 1
		}
		if strategy == "twophase" {
			comm.SetPhase(c, phase)
			return twophase.Write(j)
		}
		cfg := cfg
		cfg.Report = &reps[r]
		return tam.Write(j, cfg)
	})
	elapsed := time.Since(t0)
	if err != nil {
		return row{}, err
	}
	rw := row{pattern: pt.name, ranks: p, nodes: nn, strategy: strategy, pg: stats[0].Aggregators,
		rounds: stats[0].Rounds, elapsed: elapsed}
	rw.pl = p
	if strategy == "tam" {
		rw.pl = len(cfg.Local.Aggs)
		rw.strategy = fmt.Sprintf("tam (%d/node)", rw.pl/nn)
	}
	// The active global aggregators: the first Aggregators of the list.
	var l2 int64
	for _, g := range aggs[:rw.pg] {
		var recv int64
		for name, pc := range k.SnapshotRank(g) {
			recv += pc.MsgsRecv
			if name == tam.PhaseLayer2 {
				l2 += pc.MsgsRecv
			}
		}
		rw.gaMax = max(rw.gaMax, recv)
		rw.gaMean += float64(recv)
	}
	rw.gaMean /= float64(rw.pg)
	rw.gaL2Mean = float64(l2) / float64(rw.pg)
	for name, pc := range k.Snapshot() {
		rw.msgs += pc.MsgsSent
		rw.bytes += pc.BytesSent
		if name == tam.PhaseLayer1 {
			rw.bytesL1 += pc.BytesSent
		}
	}
	// Requests: counted independently of both strategies (every rank's
	// blocks cut at the windows of the plan); TAM's own count must agree.
	rw.before = countPieces(pt, ranges, aggs, o, stripeCount)
	rw.after = rw.before
	if strategy == "tam" {
		var pieces, extents int64
		for _, rp := range reps {
			pieces += rp.Pieces
			extents += rp.Extents
		}
		if pieces != rw.before {
			return rw, fmt.Errorf("tam counted %d pieces, the plan gives %d", pieces, rw.before)
		}
		rw.after = extents
	}
	return rw, nil
}

// access is a rank's contiguous buffer written through a view of its blocks.
func access(bs []block) (coll.Access, error) {
	lens := make([]int, len(bs))
	displs := make([]int64, len(bs))
	var size int64
	for i, b := range bs {
		lens[i], displs[i] = int(b.n), b.off
		size += b.n
	}
	ft, err := layout.HIndexed(lens, displs, layout.Byte)
	if err != nil {
		return coll.Access{}, err
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	return coll.Access{Buf: buf, Count: size, Filetype: ft, Size: size}, nil
}

// countPieces is the number of (offset, length) requests two-phase sends:
// every rank's blocks cut at the windows of every round.
func countPieces(pt *pattern, ranges []coll.Range, aggs []int, o *options, stripeCount int) int64 {
	span, ok := coll.Span(ranges)
	if !ok {
		return 0
	}
	var wins []coll.Range
	if stripeCount > 0 {
		active := twophase.ActiveAggregators(len(aggs), stripeCount, 1)
		for m := 0; m < twophase.StripeRounds(span, o.stripe, active); m++ {
			for a := 0; a < active; a++ {
				if w, ok := twophase.StripeWindow(span, o.stripe, active, a, m); ok {
					wins = append(wins, w)
				}
			}
		}
	} else {
		doms := twophase.FileDomains(span, len(aggs), 0, 0)
		for m := 0; m < twophase.Rounds(doms, o.cb); m++ {
			for _, d := range doms {
				if w := twophase.Window(d, m, o.cb); !w.Empty() {
					wins = append(wins, w)
				}
			}
		}
	}
	slices.SortFunc(wins, func(a, b coll.Range) int { return int(a.Start - b.Start) })
	var n int64
	for _, bs := range pt.blocks {
		for _, b := range bs {
			i, _ := slices.BinarySearchFunc(wins, b.off, func(w coll.Range, off int64) int {
				if w.End <= off {
					return -1
				}
				return 1
			})
			for ; i < len(wins) && wins[i].Start < b.off+b.n; i++ {
				n++
			}
		}
	}
	return n
}

func render(o *options, rows []row, total time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| pattern | ranks | nodes | strategy | P_L | P_G | rounds | GA recv max | GA recv mean | of which inter-layer | total msgs | bytes moved | of which intra-node layer | requests before | requests after | time |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		l2, b1 := "-", "-"
		if strings.HasPrefix(r.strategy, "tam") {
			l2, b1 = fmt.Sprintf("%.1f", r.gaL2Mean), mib(r.bytesL1)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d | %d | %d | %d | %.1f | %s | %d | %s | %s | %d | %d | %.2fs |\n",
			r.pattern, r.ranks, r.nodes, r.strategy, r.pl, r.pg, r.rounds, r.gaMax, r.gaMean, l2,
			r.msgs, mib(r.bytes), b1, r.before, r.after, r.elapsed.Seconds())
	}
	fmt.Fprintf(&b, "\nGA = global aggregator (P_G of them: %s); P_L = ranks sending to global aggregators "+
		"(every rank for two-phase, the local aggregators for TAM). Messages and bytes are comm.Counting's: "+
		"an Alltoall counts one message to and from every other rank, an Alltoallv one per nonzero count, "+
		"Issend/Irecv one each. Requests are (offset, length) pieces sent to global aggregators, before and after "+
		"the local aggregators' merge and coalescing. cb_buffer_size %d. Total wall time %.1fs.\n\n",
		globalDesc(o), o.cb, total.Seconds())
	return b.String()
}

func globalDesc(o *options) string {
	if o.global > 0 {
		return fmt.Sprintf("%d, stripe-cyclic, stripe %d", o.global, o.stripe)
	}
	return "one per node, even file domains"
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// discard is a driver.File that drops writes and reads zeros: the study
// measures the exchange, not the storage.
type discard struct{}

func (discard) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	return len(p), nil
}
func (discard) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
func (discard) WriteV(bufs [][]byte, off int64) (int, error) {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n, nil
}
func (d discard) ReadV(bufs [][]byte, off int64) (int, error) {
	n := 0
	for _, b := range bufs {
		k, _ := d.ReadAt(b, off+int64(n))
		n += k
	}
	return n, nil
}
func (discard) Sync() error                   { return nil }
func (discard) Truncate(int64) error          { return nil }
func (discard) Size() (int64, error)          { return 0, nil }
func (discard) Allocate(int64, int64) error   { return nil }
func (discard) Lock(int64, int64, bool) error { return nil }
func (discard) Unlock(int64, int64) error     { return nil }
func (discard) Layout() driver.Layout         { return driver.Layout{} }
func (discard) Close() error                  { return nil }

var _ driver.File = discard{}
