package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// render writes the report as markdown.
func render(w io.Writer, rep benchReport) {
	fmt.Fprintf(w, "# collio benchmark: collperf (collective write then read of a 3-D int32 array, subarray views)\n\n")
	p := rep.Params
	fmt.Fprintf(w, "np %s, array %s int32 (%s), %s repetition(s) per launch, hints: %s.\n",
		join(p.NP, "%d"), joinSizes(p.Size), joinMiB(p.Bytes), join(p.Iters, "%d"), hintText(p.Hints))
	fmt.Fprintf(w, "Bandwidth is MiB/s of the write_all/read_all call (bytes / slowest rank's time); best = max and median over\n")
	fmt.Fprintf(w, "all repetitions; ratios divide by the best host MPI-IO variant of the same table (best by best, median by the\n")
	fmt.Fprintf(w, "highest host median). open→close includes open, view, sync (writes) and close.\n")
	for _, s := range rep.Sections {
		title := s.Dir
		if s.Label != "" {
			title = s.Label + ": " + s.Dir
		}
		fmt.Fprintf(w, "\n## %s (%s)\n", title, s.FS)
		for _, t := range s.Ops {
			fmt.Fprintf(w, "\n### %s\n\n", t.Op)
			fmt.Fprintf(w, "| impl | n | best MiB/s | median MiB/s | best ÷ best host | median ÷ best host | open→close MiB/s (median) | verified |\n")
			fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|---|\n")
			for _, r := range t.Rows {
				impl := r.Impl
				if r.Impl == t.BestHost {
					impl += " (best host)"
				}
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", impl, r.N, bw(r.Best), bw(r.Median),
					ratioText(r.RatioBest), ratioText(r.RatioMedian), bw(r.MedianTotal), verified(t.Op, r.Bad))
			}
			if c := t.Collio; c != nil {
				fmt.Fprintf(w, "\n%s\n", collioLine(t.Op, c))
			}
		}
		if len(s.Memory) > 0 {
			fmt.Fprintf(w, "\n### memory per rank (MiB)\n\n")
			fmt.Fprintf(w, "| impl | peak RSS max | peak RSS min | Go alloc in write: aggregators | non-aggregators | in read: aggregators | non-aggregators |\n")
			fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|\n")
			for _, m := range s.Memory {
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Impl, mib(m.PeakRSSMax), mib(m.PeakRSSMin),
					mib(m.WriteAggMax), mib(m.WriteOtherMax), mib(m.ReadAggMax), mib(m.ReadOtherMax))
			}
			fmt.Fprintf(w, "\nPeak RSS = VmHWM of each launch's ranks, reset before the implementation ran; Go alloc = heap bytes allocated\n")
			fmt.Fprintf(w, "during one write_all/read_all call, max over ranks and repetitions (\"-\": the host MPI-IO allocates in C and\n")
			fmt.Fprintf(w, "does not say which ranks aggregate).\n")
		}
	}
	if len(rep.Failures) > 0 {
		fmt.Fprintf(w, "\n## Failures\n\n")
		for _, f := range rep.Failures {
			fmt.Fprintf(w, "- %s\n", f)
		}
	}
	fmt.Fprintf(w, "\n## Machine and command\n\n%s\n\n", rep.Machine)
	if rep.Command != "" {
		fmt.Fprintf(w, "```\n%s\n```\n", rep.Command)
	}
	if len(rep.Launches) > 0 {
		fmt.Fprintf(w, "\nLaunches (wall seconds, exit code, command):\n\n```\n")
		for _, l := range rep.Launches {
			fmt.Fprintf(w, "%3d %7.1fs rc=%d  %s\n", l.Seq, l.Seconds, l.RC, l.Command)
		}
		fmt.Fprintf(w, "```\n")
	}
}

func collioLine(op string, c *collioSummary) string {
	strategy := c.Strategy
	if c.Reason != "" {
		strategy += " (" + c.Reason + ")"
	}
	return fmt.Sprintf("collio %s: %s, rounds=%d, aggs=%d; median over %d of the slowest rank's seconds: plan %s, exchange %s, shuffle %s, io %s, rmw %s, total %s; %d messages, %.1f MiB shuffled.",
		op, strategy, c.Rounds, c.Aggregators, c.N, secs(c.Plan), secs(c.Exchange), secs(c.Shuffle), secs(c.IO), secs(c.RMW), secs(c.Total),
		c.MsgsSent, float64(c.BytesSent)/(1<<20))
}

func secs(s float64) string {
	if s == 0 {
		return "0"
	}
	return fmt.Sprintf("%.4f", s)
}

func bw(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func ratioText(r float64) string {
	if r == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

func verified(op string, bad int64) string {
	switch {
	case bad > 0:
		return fmt.Sprintf("**%d bad values**", bad)
	case op == "read":
		return "ok"
	}
	return "(by read)"
}

func mib(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(b)/(1<<20))
}

func join[T any](xs []T, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	if len(parts) == 0 {
		return "?"
	}
	return strings.Join(parts, " / ")
}

func joinSizes(xs [][3]int) string {
	parts := make([]string, len(xs))
	for i, s := range xs {
		parts[i] = fmt.Sprintf("%d×%d×%d", s[0], s[1], s[2])
	}
	return strings.Join(parts, " / ")
}

func joinMiB(xs []int64) string {
	parts := make([]string, len(xs))
	for i, b := range xs {
		if b < 1<<20 {
			parts[i] = fmt.Sprintf("%.4g KiB", float64(b)/(1<<10))
		} else {
			parts[i] = fmt.Sprintf("%.4g MiB", float64(b)/(1<<20))
		}
	}
	return strings.Join(parts, " / ")
}

func hintText(h map[string]string) string {
	if len(h) == 0 {
		return "defaults"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		parts = append(parts, k+"="+h[k])
	}
	return strings.Join(parts, " ")
}
