// Package pieces reports scripts/pieces.sh's launches of bench/c/pieces.c:
// ns per piece for the write, the read and set_view, the ratio of the
// write to the best host variant's, and collio's phases per piece from
// COLLIO_STATS.
package pieces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/progout"
	"github.com/collio/collio/cmd/benchreport/internal/records"
	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// phases are COLLIO_STATS' write phases shown per piece.
var phases = []string{"plan_ns", "req_exchange_ns", "shuffle_ns", "io_ns"}

type variant struct {
	name       string
	w, r, view []float64
	parts      [4][]float64
	failed     int
}

type cell struct {
	n, np    string
	variants []*variant
}

// Report reads pieces.sh's records (n, np, variant, round, the result line
// or FAILED, the COLLIO_STATS file or -) and writes the markdown.
func Report(w io.Writer, tsv io.Reader) error {
	_, rows, err := records.Read(tsv)
	if err != nil {
		return err
	}
	var cells []*cell
	find := func(n, np, v string) *variant {
		var c *cell
		for _, x := range cells {
			if x.n == n && x.np == np {
				c = x
			}
		}
		if c == nil {
			c = &cell{n: n, np: np}
			cells = append(cells, c)
		}
		for _, x := range c.variants {
			if x.name == v {
				return x
			}
		}
		x := &variant{name: v}
		c.variants = append(c.variants, x)
		return x
	}
	for _, r := range rows {
		v := find(r.Get("n"), r.Get("np"), r.Get("variant"))
		res := progout.ResultLine("pieces", []byte(r.Get("line")), 0)
		if res.Status != progout.OK {
			v.failed++
			continue
		}
		for _, f := range []struct {
			name string
			to   *[]float64
		}{{"write_ns_piece", &v.w}, {"read_ns_piece", &v.r}, {"view_ns_piece", &v.view}} {
			if x, err := strconv.ParseFloat(res.Get(f.name), 64); err == nil {
				*f.to = append(*f.to, x)
			}
		}
		if s := r.Get("stats"); s != "-" {
			n, _ := strconv.ParseFloat(r.Get("n"), 64)
			parts, err := collioPhases(s)
			if err != nil {
				return err
			}
			for i, p := range parts {
				v.parts[i] = append(v.parts[i], p/n)
			}
		}
	}

	fmt.Fprintf(w, "# Cost per piece: bench/c/pieces.c (scripts/pieces.sh)\n\n")
	fmt.Fprintf(w, "ns per piece over all pieces; medians of the rounds. write/read include set_view; view is the\n")
	fmt.Fprintf(w, "set_view alone. For collio, the slowest rank's write phases per piece (COLLIO_STATS).\n")
	fmt.Fprintf(w, "Ratio: the variant's write time to the best host variant's.\n\n")
	for _, c := range cells {
		fmt.Fprintf(w, "## %s pieces, np %s\n\n", c.n, c.np)
		fmt.Fprintf(w, "| variant | write | read | view | write / best host | plan | request exchange | data exchange | file I/O |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|\n")
		best, bok := 0.0, false
		for _, v := range c.variants {
			if m, ok := stats.Median(v.w); ok && !strings.HasPrefix(v.name, "collio") && (!bok || m < best) {
				best, bok = m, true
			}
		}
		for _, v := range c.variants {
			fail := ""
			if v.failed > 0 {
				fail = fmt.Sprintf(" (%d failed)", v.failed)
			}
			wm, wok := stats.Median(v.w)
			ratio := "—"
			if r, ok := stats.Ratio(wm, best); ok && wok && bok {
				ratio = fmt.Sprintf("%.2f", r)
			}
			fmt.Fprintf(w, "| %s%s | %s | %s | %s | %s |", v.name, fail, ns(v.w), ns(v.r), ns(v.view), ratio)
			for _, p := range v.parts {
				fmt.Fprintf(w, " %s |", ns(p))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// ns is the median of xs with one decimal, "" for none.
func ns(xs []float64) string {
	if m, ok := stats.Median(xs); ok {
		return fmt.Sprintf("%.1f", m)
	}
	return ""
}

// collioPhases reads the slowest rank's write phases (ns) from the first
// line of a COLLIO_STATS file.
func collioPhases(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	if !sc.Scan() {
		return nil, fmt.Errorf("%s: empty", path)
	}
	var s struct {
		CollectiveWrite map[string]json.RawMessage `json:"collective_write"`
	}
	if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]float64, len(phases))
	for i, p := range phases {
		var f struct {
			Max float64 `json:"max"`
		}
		if err := json.Unmarshal(s.CollectiveWrite[p], &f); err != nil {
			return nil, fmt.Errorf("%s: collective_write.%s: %w", path, p, err)
		}
		out[i] = f.Max
	}
	return out, nil
}
