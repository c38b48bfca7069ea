package cbreport

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/records"
	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// e3smGroup adds to a variant's launches in a cell the file checks and the
// per-file flush times.
type e3smGroup struct {
	group
	files           []string             // file names in order of appearance
	perFile         map[string][]float64 // flush times per file
	same, diff, ref int
	diffs           []string
	valid, invalid  int
	invalids        []string
}

func (g *e3smGroup) add(r records.Row) {
	g.group.add(r, "flush_s", "otc_MiBs")
	if r.Get("status") != "ok" {
		return
	}
	for _, kv := range strings.Split(r.Get("flush_files"), ",") {
		k, v, _ := strings.Cut(kv, "=")
		if x, ok := value(v); ok {
			if !slices.Contains(g.files, k) {
				g.files = append(g.files, k)
			}
			g.perFile[k] = append(g.perFile[k], x)
		}
	}
	switch c := r.Get("cmp"); c {
	case "same":
		g.same++
	case "ref":
		g.ref++
	case "-", "no-ref":
	default:
		g.diff++
		if !slices.Contains(g.diffs, c) {
			g.diffs = append(g.diffs, c)
		}
	}
	switch c := r.Get("ncvalidator"); c {
	case "valid":
		g.valid++
	case "-":
	default:
		g.invalid++
		if !slices.Contains(g.invalids, c) {
			g.invalids = append(g.invalids, c)
		}
	}
}

// perFileText is each file's median flush time, "—" for one file.
func (g *e3smGroup) perFileText() string {
	if g == nil || len(g.files) < 2 {
		return "—"
	}
	var parts []string
	for _, f := range g.files {
		m, ok := stats.Median(g.perFile[f])
		parts = append(parts, f+" "+seconds(m, ok))
	}
	return strings.Join(parts, " / ")
}

// checks says how the variant's files compared (cmp to the reference's)
// and validated, "—" without a successful launch.
func (g *e3smGroup) checks() string {
	if g == nil || g.good == 0 {
		return "—"
	}
	var s string
	switch {
	case g.same+g.diff > 0 && g.diff > 0:
		s = fmt.Sprintf("cmp **differs %d/%d: %s**", g.diff, g.same+g.diff, strings.Join(g.diffs, " "))
	case g.same > 0:
		s = fmt.Sprintf("cmp same %d/%d", g.same, g.same)
	case g.ref > 0:
		s = "cmp: reference"
	default:
		s = "cmp —"
	}
	switch {
	case g.invalid > 0:
		s += fmt.Sprintf(", ncvalidator **invalid %d/%d: %s**", g.invalid, g.valid+g.invalid, strings.Join(g.invalids, " "))
	case g.valid > 0:
		s += fmt.Sprintf(", ncvalidator ok %d/%d", g.valid, g.valid)
	}
	return s
}

type e3smGroups map[string]*e3smGroup

func (gs e3smGroups) get(key ...string) *e3smGroup { return gs[strings.Join(key, "\x00")] }

func (gs e3smGroups) at(key ...string) *e3smGroup {
	k := strings.Join(key, "\x00")
	if gs[k] == nil {
		gs[k] = &e3smGroup{group: group{vals: map[string][]float64{}}, perFile: map[string][]float64{}}
	}
	return gs[k]
}

// plain is the groups as groups, for best.
func (gs e3smGroups) plain() groups {
	out := groups{}
	for k, g := range gs {
		out[k] = &g.group
	}
	return out
}

func (g *e3smGroup) median(col string) (float64, bool) {
	if g == nil {
		return 0, false
	}
	return g.group.median(col)
}

func (g *e3smGroup) okText() string {
	if g == nil {
		return "0/0"
	}
	return g.group.okText()
}

// E3SM writes the E3SM-IO section: how it was run, the summary of collio
// against romio321 and the best host variant, and a table per cell.
func E3SM(w io.Writer, h E3SMHeader, rows []records.Row) {
	validated := "not installed: skipped"
	if h.Validate {
		validated = "yes"
	}
	fmt.Fprintf(w, "## E3SM-IO: the F, G and I cases' history files through PnetCDF\n\n")
	fmt.Fprintf(w, "- e3sm_io: %s, maps from %s\n", h.Binary, h.Datasets)
	fmt.Fprintf(w, "- PnetCDF canonical layout (e3sm_io's defaults); each rank posts its pieces of every variable, and\n")
	fmt.Fprintf(w, "  PnetCDF flushes them in one collective MPI_File_write_at_all per file (F h0: about 2 million pieces)\n")
	fmt.Fprintf(w, "- flush s: e3sm_io's \"Time of write flushing\" (max over ranks), summed over the case's files\n")
	fmt.Fprintf(w, "  (F and I: h0 and h1; per file in the next column); open-to-close MiB/s: the files' MiB over their\n")
	fmt.Fprintf(w, "  summed end-to-end times (open to close, max over ranks). Medians over the rounds; ok: successful\n")
	fmt.Fprintf(w, "  launches / launches (host variants: every variant but collio*).\n")
	fmt.Fprintf(w, "- flush ratios: the variant's flush time / romio321's, and / the best (lowest) host variant's: below 1 is\n")
	fmt.Fprintf(w, "  faster. MiB/s ratios: / romio321's, / the best (highest) host variant's: above 1 is faster.\n")
	fmt.Fprintf(w, "- files: every launch's files are compared with cmp to %s's of the same cell and round (same, or\n", h.Ref)
	fmt.Fprintf(w, "  file:byte of the first difference), and checked with ncvalidator (%s).\n", validated)
	fmt.Fprintf(w, "- hints (collio:S, NAME+k=v) reach PnetCDF as -x PNETCDF_HINTS=\"k=v;k=v\", which it adds to the MPI_Info\n")
	fmt.Fprintf(w, "  of MPI_File_open\n\n")
	if len(rows) == 0 {
		return
	}
	cases, dirs, nps, vs := order(rows, "case"), order(rows, "dir"), order(rows, "np"), order(rows, "variant")
	fmt.Fprintf(w, "Example commands (round 1, first cell):\n\n```sh\n")
	for _, r := range rows {
		if r.Get("round") == "1" && r.Get("np") == nps[0] && r.Get("dir") == dirs[0] && r.Get("case") == cases[0] {
			fmt.Fprintln(w, r.Get("command"))
		}
	}
	fmt.Fprintf(w, "```\n\n")

	gs := e3smGroups{}
	for _, r := range rows {
		gs.at(r.Get("case"), r.Get("dir"), r.Get("np"), r.Get("variant")).add(r)
	}
	plain := gs.plain()
	fmt.Fprintf(w, "### Summary: collio (automatic) against romio321 and the best host variant\n\n")
	fmt.Fprintf(w, "| case | dir | np | collio flush s | romio321 flush s | collio / romio321 | best host flush s (which) | collio / best host | collio MiB/s | best host MiB/s (which) | collio / best host | collio files |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cases {
		for _, d := range dirs {
			for _, n := range nps {
				cell := []string{c, d, n}
				bf, bfv, bfok := best(plain, cell, vs, "flush_s", lower)
				bb, bbv, bbok := best(plain, cell, vs, "otc_MiBs", higher)
				col := gs.get(c, d, n, "collio")
				cf, cfok := col.median("flush_s")
				cb, cbok := col.median("otc_MiBs")
				rf, rfok := gs.get(c, d, n, "romio321").median("flush_s")
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s (%s) | %s | %s |\n", strings.ToUpper(c), d, n,
					seconds(cf, cfok), seconds(rf, rfok), ratio(cf, cfok, rf, rfok), seconds(bf, bfok), bfv, ratio(cf, cfok, bf, bfok),
					mibs(cb, cbok), mibs(bb, bbok), bbv, ratio(cb, cbok, bb, bbok), col.checks())
			}
		}
	}
	fmt.Fprintln(w)
	for _, c := range cases {
		for _, d := range dirs {
			for _, n := range nps {
				cell := []string{c, d, n}
				fmt.Fprintf(w, "### E3SM %s case · %s · np %s\n\n", strings.ToUpper(c), d, n)
				bf, bfv, bfok := best(plain, cell, vs, "flush_s", lower)
				bb, bbv, bbok := best(plain, cell, vs, "otc_MiBs", higher)
				rom := gs.get(c, d, n, "romio321")
				rf, rfok := rom.median("flush_s")
				rb, rbok := rom.median("otc_MiBs")
				fmt.Fprintf(w, "| variant | flush s | flush s per file | flush / romio321 | flush / best host | open-to-close MiB/s | MiB/s / romio321 | MiB/s / best host | files (cmp to %s, ncvalidator) | ok |\n", h.Ref)
				fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
				for _, v := range vs {
					g := gs.get(c, d, n, v)
					f, fok := g.median("flush_s")
					b, bok := g.median("otc_MiBs")
					fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", v, seconds(f, fok), g.perFileText(),
						ratio(f, fok, rf, rfok), ratio(f, fok, bf, bfok), mibs(b, bok), ratio(b, bok, rb, rbok), ratio(b, bok, bb, bbok),
						g.checks(), g.okText())
				}
				fmt.Fprintf(w, "\nBest host variant: flush %s, open-to-close %s.\n\n", bfv, bbv)
			}
		}
	}
}
