package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/collio/collio/cmd/benchreport/internal/stats"
)

// benchReport is everything results/bench.json holds.
type benchReport struct {
	Generated string        `json:"generated"`
	Command   string        `json:"command"`
	Machine   machine       `json:"machine"`
	Params    params        `json:"params"`
	Sections  []section     `json:"sections"`
	Plots     []string      `json:"plots,omitempty"` // PNG files, relative to the markdown
	Notes     []string      `json:"notes,omitempty"`
	Failures  []string      `json:"failures,omitempty"`
	Launches  []launch      `json:"launches"`
	Runs      []collperfRun `json:"runs"`
}

// params are the workload parameters; a list holds several values when
// the runs disagree.
type params struct {
	NP        []int             `json:"np"`
	Size      [][3]int          `json:"size"`  // collperf's arrays
	Bytes     []int64           `json:"bytes"` // collperf's array bytes
	Iters     []int             `json:"iters_per_launch"`
	Hints     map[string]string `json:"hints,omitempty"` // of the first run
	Workloads []workloadParams  `json:"workloads"`
}

// workloadParams names one workload (and case) and the bytes one write
// of it moves.
type workloadParams struct {
	Name  string  `json:"name"`
	Case  string  `json:"case,omitempty"`
	Bytes []int64 `json:"bytes"`
}

// section is one workload (and case) on one storage directory (one
// -label and -dir).
type section struct {
	Workload string    `json:"workload"`
	Case     string    `json:"case,omitempty"`
	Bytes    int64     `json:"bytes"`
	Label    string    `json:"label"`
	Dir      string    `json:"dir"`
	FS       string    `json:"fs"`
	Ops      []opTable `json:"ops"`
	Memory   []memRow  `json:"memory"`
}

type opTable struct {
	Op       string         `json:"op"`
	BestHost string         `json:"best_host"` // the host variant with the highest best bandwidth
	Rows     []row          `json:"rows"`
	Collio   *collioSummary `json:"collio,omitempty"`
}

// row is one implementation's transfer bandwidth (MiB/s of write_all or
// read_all) over its repetitions.
type row struct {
	Impl        string         `json:"impl"`
	Kind        string         `json:"kind"`
	N           int            `json:"n"`
	Best        float64        `json:"best_mib_s"`
	Median      float64        `json:"median_mib_s"`
	MedianTotal float64        `json:"median_open_to_close_mib_s"`
	RatioBest   float64        `json:"ratio_best"`   // Best / the best host variant's Best; 0: no host variant
	RatioMedian float64        `json:"ratio_median"` // Median / the highest host Median
	Bad         int64          `json:"bad_values"`
	Verify      string         `json:"verify,omitempty"`
	Values      []float64      `json:"values_mib_s"`
	Collio      *collioSummary `json:"collio,omitempty"` // collio variants: their breakdown
}

// collioSummary is collio's breakdown of one operation: medians over the
// repetitions of each phase (slowest rank), the rest from the first one.
type collioSummary struct {
	Strategy    string  `json:"strategy"`
	Reason      string  `json:"reason"`
	Rounds      int     `json:"rounds"`
	Aggregators int     `json:"aggregators"`
	N           int     `json:"n"`
	Plan        float64 `json:"plan_s"`
	Exchange    float64 `json:"req_exchange_s"`
	Shuffle     float64 `json:"shuffle_s"`
	IO          float64 `json:"io_s"`
	RMW         float64 `json:"rmw_s"`
	IOWait      float64 `json:"io_wait_s"`
	Total       float64 `json:"total_s"`
	MsgsSent    int64   `json:"msgs_sent"`
	BytesSent   int64   `json:"bytes_sent"`
}

// memRow is one implementation's memory per rank: peak RSS (max and min
// over ranks and launches) and Go heap allocated during the transfers
// (max; -1 when unknown).
type memRow struct {
	Impl          string `json:"impl"`
	PeakRSSMax    int64  `json:"peak_rss_max_bytes"`
	PeakRSSMin    int64  `json:"peak_rss_min_bytes"`
	WriteAggMax   int64  `json:"write_alloc_aggregator_max_bytes"`
	WriteOtherMax int64  `json:"write_alloc_non_aggregator_max_bytes"`
	ReadAggMax    int64  `json:"read_alloc_aggregator_max_bytes"`
	ReadOtherMax  int64  `json:"read_alloc_non_aggregator_max_bytes"`
}

// median and ratio are stats' with 0 for none: the JSON report has no
// room for a missing value, and the markdown shows 0 as "—".
func median(xs []float64) float64 {
	m, _ := stats.Median(xs)
	return m
}

func ratio(a, b float64) float64 {
	r, _ := stats.Ratio(a, b)
	return r
}

func addUnique[T comparable](xs []T, x T) []T {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// collperfWorkload is the workload of runs that do not name one.
const collperfWorkload = "collperf"

// splitRuns returns one run per workload (and case) of each run: a run of
// several patterns becomes one run per pattern, with its results and
// implementations; a run that names no workload is collperf's.
func splitRuns(runs []collperfRun) []collperfRun {
	var out []collperfRun
	for _, r := range runs {
		if r.Workload == "" {
			r.Workload = collperfWorkload
		}
		type wc struct{ w, c string }
		var order []wc
		results := map[wc][]result{}
		for _, res := range r.Results {
			k := wc{res.Workload, res.Case}
			if k.w == "" {
				k = wc{r.Workload, r.Case}
			} else if k.c == "" && k.w == r.Workload {
				k.c = r.Case
			}
			if _, ok := results[k]; !ok {
				order = append(order, k)
			}
			results[k] = append(results[k], res)
		}
		if len(order) <= 1 {
			if len(order) == 1 {
				r.Workload, r.Case = order[0].w, order[0].c
			}
			out = append(out, r)
			continue
		}
		for _, k := range order {
			part := r
			part.Workload, part.Case, part.Results, part.Impls = k.w, k.c, results[k], nil
			part.Bytes = results[k][0].Bytes
			for _, im := range r.Impls {
				if im.Workload == "" || im.Workload == k.w {
					part.Impls = append(part.Impls, im)
				}
			}
			out = append(out, part)
		}
	}
	return out
}

// build groups the runs by workload (and case) and storage (label and
// directory), each in the order they first appear, and computes the
// tables.
func build(runs []collperfRun, launches []launch) benchReport {
	rep := benchReport{Runs: runs, Launches: launches}
	type wkey struct{ workload, cas string }
	type skey struct{ label, dir string }
	var wkeys []wkey
	var skeys []skey
	type key struct {
		w wkey
		s skey
	}
	byKey := map[key][]collperfRun{}
	wbytes := map[wkey][]int64{}
	for i, r := range runs {
		if i == 0 {
			rep.Params.Hints = r.Hints
		}
		for _, e := range r.Errors {
			rep.Failures = append(rep.Failures, fmt.Sprintf("%s: %s", r.File, e))
		}
	}
	for _, r := range splitRuns(runs) {
		rep.Params.NP = addUnique(rep.Params.NP, r.NP)
		if r.Workload == collperfWorkload {
			rep.Params.Size = addUnique(rep.Params.Size, r.Size)
			rep.Params.Bytes = addUnique(rep.Params.Bytes, r.Bytes)
		}
		rep.Params.Iters = addUnique(rep.Params.Iters, r.Iters)
		w, s := wkey{r.Workload, r.Case}, skey{r.Label, r.Dir}
		if !slices.Contains(wkeys, w) {
			wkeys = append(wkeys, w)
		}
		if !slices.Contains(skeys, s) {
			skeys = append(skeys, s)
		}
		wbytes[w] = addUnique(wbytes[w], r.Bytes)
		byKey[key{w, s}] = append(byKey[key{w, s}], r)
	}
	for _, w := range wkeys {
		rep.Params.Workloads = append(rep.Params.Workloads, workloadParams{Name: w.workload, Case: w.cas, Bytes: wbytes[w]})
	}
	for _, l := range launches {
		if l.RC != 0 {
			rep.Failures = append(rep.Failures, fmt.Sprintf("launch %d (%s, %s) exited with code %d: %s", l.Seq, l.Label, l.Variant, l.RC, l.Command))
		}
	}
	for _, w := range wkeys {
		for _, s := range skeys {
			if rs := byKey[key{w, s}]; len(rs) > 0 {
				sec := buildSection(s.label, s.dir, rs)
				sec.Workload, sec.Case, sec.Bytes = w.workload, w.cas, rs[0].Bytes
				if len(sec.Ops) > 0 {
					rep.Sections = append(rep.Sections, sec)
				}
			}
		}
	}
	return rep
}

func buildSection(label, dir string, runs []collperfRun) section {
	sec := section{Label: label, Dir: dir, FS: runs[0].FS}
	// Implementations: collio first, then in order of appearance.
	var impls []string
	kind := map[string]string{}
	for _, r := range runs {
		for _, res := range r.Results {
			impls = addUnique(impls, res.Impl)
			kind[res.Impl] = res.Kind
		}
	}
	slices.SortStableFunc(impls, func(a, b string) int {
		return cmp.Compare(kindOrder(kind[a]), kindOrder(kind[b]))
	})
	for _, op := range []string{"write", "read"} {
		t := opTable{Op: op}
		var bestHost, bestHostMedian float64
		for _, impl := range impls {
			rw := row{Impl: impl, Kind: kind[impl]}
			var totals []float64
			var calls []*breakdown
			for _, r := range runs {
				for _, res := range r.Results {
					if res.Impl != impl || res.Op != op {
						continue
					}
					rw.Values = append(rw.Values, res.XferMiBs)
					totals = append(totals, res.TotalMiB)
					rw.Bad += res.Bad
					if rw.Verify == "" {
						rw.Verify = res.Verify
					}
					if res.Collio != nil {
						calls = append(calls, res.Collio)
					}
				}
			}
			if rw.N = len(rw.Values); rw.N == 0 {
				continue
			}
			rw.Best = slices.Max(rw.Values)
			rw.Median = median(rw.Values)
			rw.MedianTotal = median(totals)
			if rw.Kind == "mpiio" {
				if rw.Best > bestHost {
					bestHost, t.BestHost = rw.Best, impl
				}
				bestHostMedian = max(bestHostMedian, rw.Median)
			}
			if len(calls) > 0 {
				rw.Collio = summarize(calls)
				if t.Collio == nil {
					t.Collio = rw.Collio
				}
			}
			t.Rows = append(t.Rows, rw)
		}
		for i := range t.Rows {
			t.Rows[i].RatioBest = ratio(t.Rows[i].Best, bestHost)
			t.Rows[i].RatioMedian = ratio(t.Rows[i].Median, bestHostMedian)
		}
		if len(t.Rows) > 0 {
			sec.Ops = append(sec.Ops, t)
		}
	}
	for _, impl := range impls {
		m := memRow{Impl: impl, PeakRSSMax: -1, PeakRSSMin: -1, WriteAggMax: -1, WriteOtherMax: -1, ReadAggMax: -1, ReadOtherMax: -1}
		for _, r := range runs {
			for _, im := range r.Impls {
				if im.Impl != impl || im.PeakRSSMax < 0 {
					continue
				}
				m.PeakRSSMax = max(m.PeakRSSMax, im.PeakRSSMax)
				if m.PeakRSSMin < 0 || im.PeakRSSMin < m.PeakRSSMin {
					m.PeakRSSMin = im.PeakRSSMin
				}
			}
			for _, res := range r.Results {
				if res.Impl != impl {
					continue
				}
				if res.Op == "write" {
					m.WriteAggMax, m.WriteOtherMax = max(m.WriteAggMax, res.Alloc.AggregatorMax), max(m.WriteOtherMax, res.Alloc.OtherMax)
				} else {
					m.ReadAggMax, m.ReadOtherMax = max(m.ReadAggMax, res.Alloc.AggregatorMax), max(m.ReadOtherMax, res.Alloc.OtherMax)
				}
			}
		}
		sec.Memory = append(sec.Memory, m)
	}
	return sec
}

func kindOrder(kind string) int {
	if kind == "collio" {
		return 0
	}
	return 1
}

func summarize(calls []*breakdown) *collioSummary {
	c0 := calls[0]
	s := &collioSummary{Strategy: c0.Strategy, Reason: c0.Reason, Rounds: c0.Rounds, Aggregators: c0.Aggregators,
		N: len(calls), MsgsSent: c0.MsgsSent, BytesSent: c0.BytesSent}
	pick := func(f func(*breakdown) float64) float64 {
		xs := make([]float64, len(calls))
		for i, c := range calls {
			xs[i] = f(c)
		}
		return median(xs)
	}
	s.Plan = pick(func(c *breakdown) float64 { return c.Plan })
	s.Exchange = pick(func(c *breakdown) float64 { return c.Exchange })
	s.Shuffle = pick(func(c *breakdown) float64 { return c.Shuffle })
	s.IO = pick(func(c *breakdown) float64 { return c.IO })
	s.RMW = pick(func(c *breakdown) float64 { return c.RMW })
	s.IOWait = pick(func(c *breakdown) float64 { return c.IOWait })
	s.Total = pick(func(c *breakdown) float64 { return c.Total })
	return s
}
