package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printTable prints one line per implementation and operation: bandwidth
// of the transfer alone and of the whole open-to-close sequence, then the
// slowest rank's seconds in each phase.
func printTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "impl\top\tMiB/s xfer\tMiB/s total\t%s\tverified\t\n", strings.Join(phaseNames, "\t"))
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t", r.Impl, r.Op, r.XferMiBs, r.TotalMiB)
		for _, p := range phaseNames {
			fmt.Fprintf(tw, "%.4f\t", r.Seconds[p])
		}
		v := "-"
		if r.Op == "read" {
			v = "ok"
			if r.Bad > 0 {
				v = fmt.Sprintf("%d bad", r.Bad)
			}
		}
		fmt.Fprintf(tw, "%s\t\n", v)
	}
	tw.Flush()
	fmt.Fprintln(w, "(seconds per phase are the slowest rank's; xfer = write_all or read_all)")
}
