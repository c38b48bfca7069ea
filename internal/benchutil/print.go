package benchutil

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintTable prints one line per implementation, operation and
// repetition: bandwidth of the transfer alone and of the whole
// open-to-close sequence, then the slowest rank's seconds in each phase.
func PrintTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "impl\top\trep\tMiB/s xfer\tMiB/s total\t%s\tverified\t\n", strings.Join(PhaseNames, "\t"))
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t", r.Impl, r.Op, r.Iter, r.XferMiBs, r.TotalMiB)
		for _, p := range PhaseNames {
			fmt.Fprintf(tw, "%.4f\t", r.Seconds[p])
		}
		fmt.Fprintf(tw, "%s\t\n", VerifiedText(r))
	}
	tw.Flush()
	fmt.Fprintln(w, "(seconds per phase are the slowest rank's; xfer = the write_all/read_all calls, or their independent forms)")
}

// PrintBreakdown prints collio's own account of each collective call: the
// strategy and why, rounds, aggregators, and the slowest rank's seconds in
// each phase of the call; messages and bytes summed over ranks.
func PrintBreakdown(w io.Writer, results []Result) {
	var rows []Result
	for _, r := range results {
		if r.Collio != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "collio call\trep\tstrategy (reason)\t\t\tplan\texchange\tshuffle\tio\trmw\tnot hidden\tcache wait\tagree\ttotal\tmsgs\tMiB sent\t\n")
	for _, r := range rows {
		c := r.Collio
		fmt.Fprintf(tw, "%s %s\t%d\t%s\trounds=%d\taggs=%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%.1f\t\n",
			r.Impl, r.Op, r.Iter, strategyText(c), c.Rounds, c.Aggregators, c.Plan, c.Exchange, c.Shuffle, c.IO, c.RMW, c.IOWait,
			c.CacheDrain, c.Agree, c.Total,
			c.MsgsSent, float64(c.BytesSent)/(1<<20))
	}
	tw.Flush()
	fmt.Fprintln(w, "(collio.Stats, summed over the calls of each operation: seconds are the slowest rank's, messages and bytes the")
	fmt.Fprintln(w, " sum over ranks; not hidden = the part of io+rmw the ranks waited for; cache wait = copies of the E10 cache")
	fmt.Fprintln(w, " the call waited for before starting; agree = the closing agreement on errors, E10's post_write)")
}

func strategyText(c *Breakdown) string {
	s := c.Strategy
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Domains != "" {
		s += " [domains " + c.Domains + "]"
	}
	return s
}

// PrintMemory prints peak RSS per rank for each implementation and the Go
// heap allocated during each transfer, split into aggregators and others.
func PrintMemory(w io.Writer, impls []ImplInfo, results []Result) {
	if len(impls) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "memory\top\tpeak RSS/rank max\tmin\tGo alloc in xfer: any rank\taggregators\tothers\t\n")
	for _, im := range impls {
		for _, op := range []string{"write", "read"} {
			var any, agg, other int64 = -1, -1, -1
			for _, r := range results {
				if r.Impl == im.Impl && r.Op == op {
					any, agg, other = max(any, r.Alloc.Max), max(agg, r.Alloc.AggregatorMax), max(other, r.Alloc.OtherMax)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", im.Impl, op, mib(im.PeakRSSMax), mib(im.PeakRSSMin), mib(any), mib(agg), mib(other))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "(MiB; peak RSS = VmHWM per implementation, max and min over ranks; Go alloc = heap bytes allocated during")
	fmt.Fprintln(w, " the write_all/read_all call, max over ranks and repetitions; the host MPI-IO allocates in C, unseen by Go)")
}

// mib formats bytes as MiB; negative means unknown.
func mib(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(b)/(1<<20))
}

// VerifiedText says how a result's data were checked, for tables.
func VerifiedText(r Result) string {
	switch {
	case r.Bad > 0:
		return fmt.Sprintf("%d bad", r.Bad)
	case r.Verify == VerifyValues:
		return "ok"
	case r.Verify == VerifyReadBack:
		return "ok (read back)"
	case r.Verify == VerifyByRead:
		return "(by read)"
	case r.Verify == VerifyNone:
		return "not checked"
	case r.Op == "read":
		return "ok"
	}
	return "-"
}
