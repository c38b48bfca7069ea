// Package cbreport writes results/cbench.md from cbench's records: per
// cell (program, directory, np, call size) each variant's medians over the
// rounds' successful launches and their ratios to the best host variant of
// the cell; for E3SM-IO, per cell (case, directory, np) the flush times,
// open-to-close bandwidth and file checks. The order of programs,
// directories, rank counts, sizes and variants is that of their first
// launch, which is the order of the settings.
package cbreport

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/records"
	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// Header is what the report says about the run before its tables.
type Header struct {
	Command  string   // the settings as a command line that reruns them
	Date     string   // when the run ended
	Commit   string   // git describe of the work tree
	Library  string   // the preloaded library: path, hash, build time ("" when no collio variant ran)
	Machine  string   // cores, kernel, MPI
	Launches int      // launches of the run
	Seconds  int      // the run's wall time
	Notes    []string // variants skipped and the like
}

// E3SMHeader is what the report says about the E3SM-IO runs.
type E3SMHeader struct {
	Binary   string // e3sm_io's path and hash
	Datasets string // the maps' directory
	Ref      string // the variant whose files the others are compared to
	Validate bool   // ncvalidator ran
}

// Render writes the whole report: the header, the C programs' tables (from
// crows, cbench.tsv) and the E3SM-IO section (from erows, cbench-e3sm.tsv;
// none when eh is nil).
func Render(w io.Writer, h Header, crows []records.Row, eh *E3SMHeader, erows []records.Row) {
	fmt.Fprintf(w, "# cbench: C programs on the host MPI-IO and with libcollio preloaded\n\n")
	fmt.Fprintf(w, "- command: `%s`\n", h.Command)
	fmt.Fprintf(w, "- date: %s; repository %s (git describe of the work tree)\n", h.Date, h.Commit)
	if h.Library != "" {
		fmt.Fprintf(w, "- library: %s\n", h.Library)
	}
	fmt.Fprintf(w, "- environment of every launch: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and\n")
	fmt.Fprintf(w, "  OMPI_MCA_orte_tmpdir_base=<a fresh directory> (mpirun's session directory, private to this run)\n")
	fmt.Fprintf(w, "- machine: %s\n", h.Machine)
	e3 := ""
	if eh != nil {
		e3 = " (E3SM-IO: cbench-e3sm.tsv)"
	}
	fmt.Fprintf(w, "- %d launches in %ds; every launch of every variant is in cbench.tsv%s with its command\n", h.Launches, h.Seconds, e3)
	if len(crows) > 0 {
		fmt.Fprintf(w, "- figures: medians over the rounds' successful launches, MiB/s over all ranks (collperf, callcost:\n")
		fmt.Fprintf(w, "  data / phase time from the first rank's start to the last rank's end; IOR: its own figure,\n")
		fmt.Fprintf(w, "  open and close included); µs/call (callcost): that phase time / calls.\n")
		fmt.Fprintf(w, "- ratio: the variant's median / the best host variant's median in the same cell (host variants:\n")
		fmt.Fprintf(w, "  every variant but collio*). ok: successful launches / launches.\n")
	}
	for _, n := range h.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
	fmt.Fprintln(w)
	if len(crows) > 0 {
		C(w, crows)
	}
	if eh != nil {
		E3SM(w, *eh, erows)
	}
}

// order is the distinct values of col in rows, in order of appearance.
func order(rows []records.Row, col string) []string {
	var out []string
	for _, r := range rows {
		if v := r.Get(col); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// extraColumns is the columns of rows beyond base, measured by a probe
// of the launcher (say, bytes on the network), in name order: each gets a
// column of medians in the cells' tables.
func extraColumns(rows []records.Row, base []string) []string {
	var out []string
	for _, r := range rows {
		for c := range r {
			if !slices.Contains(base, c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// IsHost: every variant but collio's is one of the host's.
func IsHost(variant string) bool { return !strings.HasPrefix(variant, "collio") }

// value is a record's number, ok false for "-" (not measured).
func value(s string) (float64, bool) {
	if s == "-" || s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// group is the launches of one variant in one cell.
type group struct {
	n     int      // launches
	good  int      // successful launches
	fails []string // the others' statuses
	vals  map[string][]float64
}

func (g *group) add(r records.Row, cols ...string) {
	g.n++
	if r.Get("status") != "ok" {
		g.fails = append(g.fails, r.Get("status"))
		return
	}
	g.good++
	for _, c := range cols {
		if v, ok := value(r.Get(c)); ok {
			g.vals[c] = append(g.vals[c], v)
		}
	}
}

// median of a column of the group; ok false without values (or without
// the group).
func (g *group) median(col string) (float64, bool) {
	if g == nil {
		return 0, false
	}
	return stats.Median(g.vals[col])
}

func (g *group) okText() string {
	if g == nil {
		return "0/0"
	}
	s := fmt.Sprintf("%d/%d", g.good, g.n)
	if g.good < g.n {
		s = "**" + s + " FAILED: " + strings.Join(g.fails, " ") + "**"
	}
	return s
}

type groups map[string]*group

func (gs groups) get(key ...string) *group {
	return gs[strings.Join(key, "\x00")]
}

func (gs groups) at(key ...string) *group {
	k := strings.Join(key, "\x00")
	if gs[k] == nil {
		gs[k] = &group{vals: map[string][]float64{}}
	}
	return gs[k]
}

// best is the best host variant's median of col over vs in the cell, by
// better (higher or lower); ok false when no host variant has one.
func best(gs groups, cell []string, vs []string, col string, better func(a, b float64) bool) (m float64, which string, ok bool) {
	return bestOf(gs, cell, vs, IsHost, col, better)
}

// bestOf is best over the variants of vs that keep accepts.
func bestOf(gs groups, cell []string, vs []string, keep func(string) bool, col string, better func(a, b float64) bool) (m float64, which string, ok bool) {
	which = "—"
	for _, v := range vs {
		if !keep(v) {
			continue
		}
		if x, has := gs.get(append(slices.Clone(cell), v)...).median(col); has && (!ok || better(x, m)) {
			m, which, ok = x, v, true
		}
	}
	return m, which, ok
}

func higher(a, b float64) bool { return a > b }
func lower(a, b float64) bool  { return a < b }

// mibs formats MiB/s and µs: whole numbers from 100 up.
func mibs(x float64, ok bool) string {
	switch {
	case !ok:
		return "—"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// seconds formats a time to three significant digits or so.
func seconds(x float64, ok bool) string {
	switch {
	case !ok:
		return "—"
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	case x >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

// ratio formats stats.Ratio of two medians.
func ratio(x float64, xok bool, ref float64, refok bool) string {
	if !xok || !refok {
		return "—"
	}
	r, ok := stats.Ratio(x, ref)
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.2f", r)
}
