package cbreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/records"
)

// C writes the C programs' part: the example commands of the first cell,
// the summary of collio against the best host variant, and a table per
// cell.
func C(w io.Writer, rows []records.Row) {
	progs, dirs, nps, sizes, vs := order(rows, "program"), order(rows, "dir"), order(rows, "np"), order(rows, "size"), order(rows, "variant")
	extra := extraColumns(rows, records.Columns)
	gs := groups{}
	calls := map[string]string{}
	for _, r := range rows {
		cols := append([]string{"write_MiBs", "read_MiBs", "write_us", "read_us"}, extra...)
		gs.at(r.Get("program"), r.Get("dir"), r.Get("np"), r.Get("size"), r.Get("variant")).add(r, cols...)
		calls[r.Get("program")+"\x00"+r.Get("size")] = r.Get("calls")
	}

	fmt.Fprintf(w, "## Example commands (round 1, np %s, %s, %s)\n\n```sh\n", nps[0], dirs[0], sizes[0])
	for _, r := range rows {
		if r.Get("round") == "1" && r.Get("np") == nps[0] && r.Get("dir") == dirs[0] && r.Get("size") == sizes[0] {
			fmt.Fprintln(w, r.Get("command"))
		}
	}
	fmt.Fprintf(w, "```\n\n")

	fmt.Fprintf(w, "## Summary: collio (automatic) / best host variant\n\n")
	fmt.Fprintf(w, "| program | dir | np | size | write MiB/s: collio / best host (which) | ratio | read MiB/s: collio / best host (which) | ratio |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|\n")
	for _, p := range progs {
		for _, d := range dirs {
			for _, n := range nps {
				for _, s := range sizes {
					cell := []string{p, d, n, s}
					fmt.Fprintf(w, "| %s | %s | %s | %s |", p, d, n, s)
					for _, col := range []string{"write_MiBs", "read_MiBs"} {
						hb, hv, hok := best(gs, cell, vs, col, higher)
						cm, cok := gs.get(p, d, n, s, "collio").median(col)
						fmt.Fprintf(w, " %s / %s (%s) | %s |", mibs(cm, cok), mibs(hb, hok), hv, ratio(cm, cok, hb, hok))
					}
					fmt.Fprintln(w)
				}
			}
		}
	}
	fmt.Fprintln(w)
	forcedSummary(w, gs, progs, dirs, nps, sizes, vs)

	for _, p := range progs {
		fmt.Fprintf(w, "## %s\n\n", p)
		us := p == "callcost"
		for _, d := range dirs {
			for _, n := range nps {
				for _, s := range sizes {
					cell := []string{p, d, n, s}
					fmt.Fprintf(w, "### %s · %s · np %s · %s per call and rank (%s calls per phase)\n\n", p, d, n, s, calls[p+"\x00"+s])
					bw, bwv, bwok := best(gs, cell, vs, "write_MiBs", higher)
					br, brv, brok := best(gs, cell, vs, "read_MiBs", higher)
					hdr, sep := "| variant | write MiB/s | read MiB/s | write / best host | read / best host |", "|---|---|---|---|---|"
					if us {
						hdr, sep = hdr+" write µs/call | read µs/call |", sep+"---|---|"
					}
					for _, c := range extra {
						hdr, sep = hdr+" "+c+" |", sep+"---|"
					}
					fmt.Fprintf(w, "%s ok |\n%s---|\n", hdr, sep)
					for _, v := range vs {
						g := gs.get(p, d, n, s, v)
						wm, wok := g.median("write_MiBs")
						rm, rok := g.median("read_MiBs")
						fmt.Fprintf(w, "| %s | %s | %s | %s | %s |", v, mibs(wm, wok), mibs(rm, rok), ratio(wm, wok, bw, bwok), ratio(rm, rok, br, brok))
						if us {
							fmt.Fprintf(w, " %s | %s |", mibs(g.median("write_us")), mibs(g.median("read_us")))
						}
						for _, c := range extra {
							fmt.Fprintf(w, " %s |", mibs(g.median(c)))
						}
						fmt.Fprintf(w, " %s |\n", g.okText())
					}
					fmt.Fprintf(w, "\nBest host variant: write %s, read %s.\n\n", bwv, brv)
				}
			}
		}
	}
}

// forcedSummary writes collio's automatic choice against the best of the
// strategies forced in the run (collio:S variants without other hints):
// where those differ, the automatic choice should be within 10% of the
// best. Nothing when the run forced fewer than two strategies.
func forcedSummary(w io.Writer, gs groups, progs, dirs, nps, sizes, vs []string) {
	var forced []string
	for _, v := range vs {
		if isForced(v) {
			forced = append(forced, v)
		}
	}
	if len(forced) < 2 {
		return
	}
	fmt.Fprintf(w, "## Summary: collio (automatic) / best forced strategy\n\n")
	fmt.Fprintf(w, "Forced: %s. The spread is the slowest forced strategy's median / the fastest's.\n\n", strings.Join(forced, ", "))
	fmt.Fprintf(w, "| program | dir | np | size | write MiB/s: collio / best forced (which) | ratio | spread | read MiB/s: collio / best forced (which) | ratio | spread |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range progs {
		for _, d := range dirs {
			for _, n := range nps {
				for _, s := range sizes {
					fmt.Fprintf(w, "| %s | %s | %s | %s |", p, d, n, s)
					cell := []string{p, d, n, s}
					for _, col := range []string{"write_MiBs", "read_MiBs"} {
						bm, bv, ok := bestOf(gs, cell, vs, isForced, col, higher)
						wm, _, _ := bestOf(gs, cell, vs, isForced, col, lower)
						cm, cok := gs.get(p, d, n, s, "collio").median(col)
						fmt.Fprintf(w, " %s / %s (%s) | %s | %s |", mibs(cm, cok), mibs(bm, ok), bv, ratio(cm, cok, bm, ok), ratio(bm, ok, wm, ok && wm > 0))
					}
					fmt.Fprintln(w)
				}
			}
		}
	}
	fmt.Fprintln(w)
}

// isForced: the variant forces a strategy and sets no other hint.
func isForced(v string) bool { return strings.HasPrefix(v, "collio:") && !strings.Contains(v, "+") }
