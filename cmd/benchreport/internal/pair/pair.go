// Package pair reports scripts/pair.sh's alternating collperf launches:
// the medians of collio's, the host variant's and a base build's
// bandwidths, timed three ways, their ratios, and the median of the
// launches' own ratios.
package pair

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// result is the part of one collperf -json result that pair reads.
type result struct {
	Op   string  `json:"op"`
	Iter int     `json:"iter"`
	Kind string  `json:"kind"`
	Xfer float64 `json:"xfer_mib_s"`
	Span float64 `json:"span_mib_s"`
	Wall float64 `json:"wall_mib_s"`
}

// The three timings: their keys and names.
var timings = []struct{ key, name string }{
	{"xfer", "coll_perf timing"}, {"span", "transfer span"}, {"wall", "IOR timing (open to close)"},
}

func (r result) mibs(how string) float64 {
	switch how {
	case "xfer":
		return r.Xfer
	case "span":
		return r.Span
	}
	return r.Wall
}

type key struct{ op, who, how string }

// Report reads dir's <side>-<k>.json (side collio, host or base) and
// writes the comparison. Writes after the first of a launch (which
// allocates the file's pages) and all reads count.
func Report(w io.Writer, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	vals, ratios := map[key][]float64{}, map[key][]float64{}
	for _, f := range files {
		side, _, _ := strings.Cut(filepath.Base(f), "-")
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc struct{ Results []result }
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		launch := map[key][]float64{}
		for _, r := range doc.Results {
			if r.Op != "read" && r.Iter <= 1 {
				continue
			}
			// In an interleaved launch the host's results come in the
			// collio side's file: they are the host's.
			who := side
			if r.Kind == "mpiio" {
				who = "host"
			}
			for _, t := range timings {
				k := key{r.Op, who, t.key}
				vals[k] = append(vals[k], r.mibs(t.key))
				launch[k] = append(launch[k], r.mibs(t.key))
			}
		}
		for k, v := range launch {
			if k.who == "host" {
				continue
			}
			h, _ := stats.Median(launch[key{k.op, "host", k.how}])
			m, _ := stats.Median(v)
			if r, ok := stats.Ratio(m, h); ok {
				ratios[k] = append(ratios[k], r)
			}
		}
	}
	for _, op := range []string{"write", "read"} {
		for _, t := range timings {
			cv, hv := vals[key{op, "collio", t.key}], vals[key{op, "host", t.key}]
			c, _ := stats.Median(cv)
			h, _ := stats.Median(hv)
			if r, ok := stats.Ratio(c, h); ok && len(cv) > 0 {
				fmt.Fprintf(w, "%s, %s: collio median %.0f MiB/s (n=%d), host %.0f (n=%d), ratio %.3f\n", op, t.name, c, len(cv), h, len(hv), r)
			}
			if bv := vals[key{op, "base", t.key}]; len(bv) > 0 {
				b, _ := stats.Median(bv)
				r, _ := stats.Ratio(b, h)
				fmt.Fprintf(w, "%s, %s: base median %.0f MiB/s, ratio %.3f\n", op, t.name, b, r)
			}
			for _, who := range []string{"collio", "base"} {
				if rs := ratios[key{op, who, t.key}]; len(rs) > 0 {
					m, _ := stats.Median(rs)
					fmt.Fprintf(w, "%s, %s: %s, median of %d launches' own ratios %.3f (range %.3f-%.3f)\n", op, t.name, who, len(rs), m,
						slices.Min(rs), slices.Max(rs))
				}
			}
		}
	}
	return nil
}
