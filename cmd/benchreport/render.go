package main

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// render writes the report as markdown. A report of collperf runs only
// keeps collperf's layout; with other workloads every section is one
// workload on one storage directory, after a summary of the ratios.
func render(w io.Writer, rep benchReport) {
	p := rep.Params
	multi := !onlyCollperf(rep)
	if !multi {
		fmt.Fprintf(w, "# collio benchmark: collperf (collective write then read of a 3-D int32 array, subarray views)\n\n")
		fmt.Fprintf(w, "np %s, array %s int32 (%s), %s repetition(s) per launch, hints: %s.\n",
			join(p.NP, "%d"), joinSizes(p.Size), joinMiB(p.Bytes), join(p.Iters, "%d"), hintText(p.Hints))
	} else {
		fmt.Fprintf(w, "# collio benchmark: collperf, IOR-style runs and application I/O patterns\n\n")
		fmt.Fprintf(w, "np %s, %s repetition(s) per launch, hints of the first run: %s. Workloads (bytes per write):\n\n",
			join(p.NP, "%d"), join(p.Iters, "%d"), hintText(p.Hints))
		for _, wl := range p.Workloads {
			fmt.Fprintf(w, "- **%s**: %s (%s)\n", wl.Name, caseOrDash(wl.Case), joinMiB(wl.Bytes))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Bandwidth is MiB/s of the write_all/read_all call (bytes / slowest rank's time, every rank timed from a barrier\n")
	fmt.Fprintf(w, "just before the call, as in coll_perf and IOR); best = max and median over\n")
	fmt.Fprintf(w, "all repetitions; ratios divide by the best host MPI-IO variant of the same table (best by best, median by the\n")
	fmt.Fprintf(w, "highest host median). open→close includes open, view, sync (writes) and close.\n")
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "Note: %s.\n", strings.TrimSuffix(n, "."))
		}
	}
	if multi {
		fmt.Fprintf(w, "For iorbench and the patterns, \"the call\" is all the transfer calls of one write or read (their sum).\n")
		renderSummary(w, rep)
	}
	if len(rep.Plots) > 0 {
		fmt.Fprintf(w, "\n## Plots\n\n")
		for _, pl := range rep.Plots {
			fmt.Fprintf(w, "![%s](%s)\n\n", strings.TrimSuffix(pl, ".png"), pl)
		}
		fmt.Fprintf(w, "bench-bandwidth-*: median MiB/s per implementation, write and read, one panel per workload; ")
		fmt.Fprintf(w, "bench-breakdown-*: collio's phases (median of the slowest rank's seconds) per collio variant.\n")
	}
	for _, s := range rep.Sections {
		title := s.Dir
		if s.Label != "" {
			title = s.Label + ": " + s.Dir
		}
		if multi {
			fmt.Fprintf(w, "\n## %s — %s (%s)\n\n%s, %s per write.\n", s.Workload, title, s.FS, caseOrDash(s.Case), joinMiB([]int64{s.Bytes}))
		} else {
			fmt.Fprintf(w, "\n## %s (%s)\n", title, s.FS)
		}
		for _, t := range s.Ops {
			fmt.Fprintf(w, "\n### %s\n\n", t.Op)
			fmt.Fprintf(w, "| impl | n | best MiB/s | median MiB/s | best ÷ best host | median ÷ best host | open→close MiB/s (median) | verified |\n")
			fmt.Fprintf(w, "|---|--:|--:|--:|--:|--:|--:|---|\n")
			var withCollio []row
			for _, r := range t.Rows {
				impl := r.Impl
				if r.Impl == t.BestHost {
					impl += " (best host)"
				}
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", impl, r.N, bw(r.Best), bw(r.Median),
					ratioText(r.RatioBest), ratioText(r.RatioMedian), bw(r.MedianTotal), verified(t.Op, r.Bad, r.Verify))
				if r.Collio != nil {
					withCollio = append(withCollio, r)
				}
			}
			switch {
			case len(withCollio) > 1:
				renderBreakdown(w, withCollio)
			case t.Collio != nil:
				fmt.Fprintf(w, "\n%s\n", collioLine(t.Op, t.Collio))
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

// verified says how a row's data were checked: by the result's verify
// field, or for older collperf JSON without it, reads were checked and
// writes checked by them.
func verified(op string, bad int64, how string) string {
	switch {
	case bad > 0:
		return fmt.Sprintf("**%d bad values**", bad)
	case how == "values":
		return "ok"
	case how == "read back":
		return "ok (read back)"
	case how == "by read":
		return "(by read)"
	case how == "none":
		return "not checked"
	case op == "read":
		return "ok"
	}
	return "(by read)"
}

func onlyCollperf(rep benchReport) bool {
	for _, s := range rep.Sections {
		if s.Workload != collperfWorkload {
			return false
		}
	}
	return true
}

func caseOrDash(c string) string {
	if c == "" {
		return "–"
	}
	return c
}

// renderBreakdown is collio's account of one operation for each collio
// variant of a table.
func renderBreakdown(w io.Writer, rows []row) {
	fmt.Fprintf(w, "\ncollio breakdown (median over the repetitions of the slowest rank's seconds; not hidden = io+rmw the ranks waited for):\n\n")
	fmt.Fprintf(w, "| impl | strategy (reason) | rounds | aggs | plan | exchange | shuffle | io | rmw | not hidden | total | msgs | MiB shuffled |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		c := r.Collio
		strategy := c.Strategy
		if c.Reason != "" {
			strategy += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %d | %.1f |\n", r.Impl, strategy, c.Rounds, c.Aggregators,
			secs(c.Plan), secs(c.Exchange), secs(c.Shuffle), secs(c.IO), secs(c.RMW), secs(c.IOWait), secs(c.Total),
			c.MsgsSent, float64(c.BytesSent)/(1<<20))
	}
}

// renderSummary is one table per operation: a row per workload and
// storage, a column per implementation with its best ÷ the best host
// variant's best (or, where no host variant ran, its best MiB/s).
func renderSummary(w io.Writer, rep benchReport) {
	impls := allImpls(rep)
	for _, op := range []string{"write", "read"} {
		fmt.Fprintf(w, "\n## Summary: %s, best ÷ best host variant\n\n", op)
		fmt.Fprintf(w, "| workload | storage | best host (MiB/s) |")
		for _, im := range impls {
			fmt.Fprintf(w, " %s |", im)
		}
		fmt.Fprintf(w, "\n|---|---|---|%s\n", strings.Repeat("--:|", len(impls)))
		for _, s := range rep.Sections {
			for _, t := range s.Ops {
				if t.Op != op {
					continue
				}
				host := "–"
				cells := map[string]string{}
				for _, r := range t.Rows {
					if r.Impl == t.BestHost {
						host = fmt.Sprintf("%s (%s)", strings.TrimPrefix(r.Impl, "mpiio:"), bw(r.Best))
					}
					c := ratioText(r.RatioBest)
					if t.BestHost == "" {
						c = bw(r.Best) + " MiB/s"
					}
					if r.Bad > 0 {
						c += " **bad**"
					}
					cells[r.Impl] = c
				}
				fmt.Fprintf(w, "| %s | %s | %s |", s.Workload, storageName(s), host)
				for _, im := range impls {
					fmt.Fprintf(w, " %s |", cells[im])
				}
				fmt.Fprintln(w)
			}
		}
	}
}

// allImpls lists every implementation of the report, collio variants
// first, each group in order of appearance.
func allImpls(rep benchReport) []string {
	var collioImpls, host []string
	for _, s := range rep.Sections {
		for _, t := range s.Ops {
			for _, r := range t.Rows {
				if r.Kind == "collio" {
					collioImpls = addUnique(collioImpls, r.Impl)
				} else {
					host = addUnique(host, r.Impl)
				}
			}
		}
	}
	return append(collioImpls, host...)
}

// storageName is a section's storage label, or its directory's name.
func storageName(s section) string {
	if s.Label != "" {
		return s.Label
	}
	return filepath.Base(s.Dir)
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
