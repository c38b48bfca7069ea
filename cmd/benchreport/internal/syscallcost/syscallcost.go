// Package syscallcost reports scripts/syscallcost.sh's launches of
// cmd/syscallcost: per mode, the median bandwidth over the launches'
// repetitions (the first of each launch left out), timed as collperf does
// (the slowest rank) and as the span (first start to last end), and the
// ratio to the first mode's.
package syscallcost

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// span is one rank's repetition: start and end, Unix nanoseconds.
type span struct{ t0, t1 int64 }

// Report reads dir/<mode>.<k>, the output of launch k of each mode (one
// line per rank and repetition: rank, repetition, start, end), and writes
// a line per mode. Every rank writes 256 runs of 512 KiB per repetition.
func Report(w io.Writer, dir string, np int, modes []string) error {
	mib := float64(np) * 256 * 512 / 1024
	var first float64
	for i, mode := range modes {
		files, err := filepath.Glob(filepath.Join(dir, mode+".*"))
		if err != nil {
			return err
		}
		var xfer, spans []float64
		for _, f := range files {
			reps, err := readReps(f)
			if err != nil {
				return err
			}
			for rep, v := range reps {
				if rep == 0 {
					continue
				}
				slowest, lo, hi := int64(0), v[0].t0, v[0].t1
				for _, s := range v {
					slowest, lo, hi = max(slowest, s.t1-s.t0), min(lo, s.t0), max(hi, s.t1)
				}
				xfer = append(xfer, mib/(float64(slowest)/1e9))
				spans = append(spans, mib/(float64(hi-lo)/1e9))
			}
		}
		x, ok := stats.Median(xfer)
		if !ok {
			return fmt.Errorf("%s: no repetitions after the first in %s", mode, dir)
		}
		s, _ := stats.Median(spans)
		if i == 0 {
			first = x
		}
		r, _ := stats.Ratio(x, first)
		fmt.Fprintf(w, "%-7s %8.0f MiB/s (span %.0f), %.3f of %s, n=%d\n", mode, x, s, r, modes[0], len(xfer))
	}
	return nil
}

func readReps(path string) (map[int64][]span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reps := map[int64][]span{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		var v [4]int64
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s:%d: want rank, repetition, start, end", path, n)
		}
		for i, s := range fs {
			if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
		}
		reps[v[1]] = append(reps[v[1]], span{v[2], v[3]})
	}
	return reps, sc.Err()
}
