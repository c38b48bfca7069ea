//go:build cgo

package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/collio/collio/internal/benchutil"
)

// printHeader prints the run's parameters, in the spirit of IOR's
// "Options:" block.
func printHeader(w io.Writer, c config, np int, fs string) {
	access := "single-shared-file"
	if c.filePerProc {
		access = "file-per-process"
	}
	typ := "independent"
	if c.collective {
		typ = "collective"
	}
	agg := int64(np) * int64(c.segments) * c.block
	fmt.Fprintf(w, "iorbench: IOR-style benchmark of collio and the host MPI-IO\n")
	fmt.Fprintf(w, "Options:\n")
	row := func(k, v string) { fmt.Fprintf(w, "%-20s: %s\n", k, v) }
	row("api", strings.Join(c.impls, ", "))
	row("test filename", c.path+" ("+fs+")")
	row("access", access)
	row("type", typ)
	row("segments", fmt.Sprint(c.segments))
	row("ordering in a file", "sequential")
	if c.reorder {
		row("ordering inter file", fmt.Sprintf("constant task offset (%d)", c.reorderOffset))
	} else {
		row("ordering inter file", "no tasks offsets")
	}
	row("tasks", fmt.Sprint(np))
	row("repetitions", fmt.Sprint(c.iters))
	row("xfersize", benchutil.FormatBytes(c.xfer))
	row("blocksize", benchutil.FormatBytes(c.block))
	row("aggregate filesize", benchutil.FormatBytes(agg))
	if len(c.hints) > 0 {
		row("hints", benchutil.FormatHints(c.hints))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-4s %s\n",
		"access", "bw(MiB/s)", "IOPS", "Latency(s)", "block(KiB)", "xfer(KiB)", "open(s)", "wr/rd(s)", "close(s)", "total(s)", "iter", "api")
	fmt.Fprintf(w, "%-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-10s %-4s %s\n",
		"------", "---------", "----", "----------", "----------", "---------", "--------", "--------", "--------", "--------", "----", "---")
}

// opsPerSec is the aggregate transfer calls per second of a result (over
// its open-to-close time, as IOR's OPs are bandwidth / transfer size).
func opsPerSec(r benchutil.Result, xfer int64) float64 {
	return r.TotalMiB * (1 << 20) / float64(xfer)
}

// printLine prints one repetition of one operation like IOR's result
// lines: bandwidth and ops over the open-to-close time, mean time per
// call, the phases (close includes sync), and the repetition from 0.
func printLine(w io.Writer, r benchutil.Result, c config, iter int) {
	lat := 0.0
	if r.Calls > 0 {
		lat = r.Seconds["xfer"] / float64(r.Calls)
	}
	verdict := ""
	if r.Bad > 0 {
		verdict = fmt.Sprintf("  %d wrong words", r.Bad)
	}
	fmt.Fprintf(w, "%-10s %-10.2f %-10.2f %-10.6f %-10.2f %-10.2f %-10.6f %-10.6f %-10.6f %-10.6f %-4d %s%s\n",
		r.Op, r.TotalMiB, opsPerSec(r, c.xfer), lat, float64(c.block)/1024, float64(c.xfer)/1024,
		r.Seconds["open"]+r.Seconds["view"], r.Seconds["xfer"], r.Seconds["sync"]+r.Seconds["close"], r.Total, iter-1, r.Impl, verdict)
}

// stats are max, min, mean and (population) standard deviation.
type stats struct{ max, min, mean, sd float64 }

func summarize(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := stats{max: xs[0], min: xs[0]}
	for _, x := range xs {
		s.max, s.min = max(s.max, x), min(s.min, x)
		s.mean += x
	}
	s.mean /= float64(len(xs))
	for _, x := range xs {
		s.sd += (x - s.mean) * (x - s.mean)
	}
	s.sd = math.Sqrt(s.sd / float64(len(xs)))
	return s
}

// printSummary prints IOR's "Max Write/Read" lines and "Summary of all
// tests": one line per implementation and operation.
func printSummary(w io.Writer, results []benchutil.Result, c config, np int) {
	type key struct{ impl, op string }
	var keys []key
	bw := map[key][]float64{}
	ops := map[key][]float64{}
	secs := map[key][]float64{}
	for _, r := range results {
		k := key{r.Impl, r.Op}
		if _, ok := bw[k]; !ok {
			keys = append(keys, k)
		}
		bw[k] = append(bw[k], r.TotalMiB)
		ops[k] = append(ops[k], opsPerSec(r, c.xfer))
		secs[k] = append(secs[k], r.Total)
	}
	if len(keys) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, k := range keys {
		m := summarize(bw[k]).max
		fmt.Fprintf(w, "Max %-6s %-24s %.2f MiB/sec (%.2f MB/sec)\n", strings.ToUpper(k.op[:1])+k.op[1:]+":", k.impl, m, m*1.048576)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Summary of all tests:")
	fmt.Fprintf(w, "%-9s %10s %10s %10s %10s %10s %10s %10s %10s %10s %6s %4s %3s %5s %8s %6s %10s %10s %9s  %s\n",
		"Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)", "Mean(OPs)", "StdDev", "Mean(s)",
		"#Tasks", "reps", "fPP", "reord", "reordoff", "segcnt", "blksiz", "xsize", "aggs(MiB)", "API")
	agg := float64(int64(np)*int64(c.segments)*c.block) / (1 << 20)
	for _, k := range keys {
		b, o, t := summarize(bw[k]), summarize(ops[k]), summarize(secs[k])
		fmt.Fprintf(w, "%-9s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.5f %6d %4d %3d %5d %8d %6d %10d %10d %9.1f  %s\n",
			k.op, b.max, b.min, b.mean, b.sd, o.max, o.min, o.mean, o.sd, t.mean,
			np, len(bw[k]), b2i(c.filePerProc), b2i(c.reorder), c.reorderOffset, c.segments, c.block, c.xfer, agg, k.impl)
	}
	fmt.Fprintln(w, "(bandwidth and OPs over each operation's open-to-close time, slowest rank per phase, as IOR reports them;")
	fmt.Fprintln(w, " the JSON also has the bandwidth of the transfer calls alone)")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
