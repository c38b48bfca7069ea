package benchutil

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
)

// PhaseNames are the timed phases of one write or read, in the order they
// run and are printed: open the file, set the view, the transfer calls
// (write_all/read_all or their independent forms), sync (writes) and close.
var PhaseNames = []string{"open", "view", "xfer", "sync", "close"}

// Phase indices into Sample.Phase.
const (
	PhaseOpen = iota
	PhaseView
	PhaseXfer
	PhaseSync
	PhaseClose
	numPhases
)

// How a result's data were verified (Result.Verify).
const (
	VerifyValues   = "values"    // every value this operation moved was compared
	VerifyByRead   = "by read"   // a write, checked by the read that follows it
	VerifyReadBack = "read back" // a write, read back and compared right after (iorbench -W)
	VerifyNone     = "none"      // not checked
)

// Result is one measured write or read of one implementation: the JSON
// record every benchmark command writes, and benchreport reads.
type Result struct {
	Impl     string             `json:"impl"` // collio (or the -name label), or mpiio:<io>/<fcoll> for the host MPI-IO
	Kind     string             `json:"kind"` // collio or mpiio
	Workload string             `json:"workload,omitempty"`
	Case     string             `json:"case,omitempty"`
	Op       string             `json:"op"`   // write or read
	Iter     int                `json:"iter"` // repetition, from 1
	Bytes    int64              `json:"bytes"`
	Calls    int64              `json:"calls,omitempty"` // transfer calls per rank
	Seconds  map[string]float64 `json:"seconds"`         // slowest rank per phase
	Total    float64            `json:"total_seconds"`
	XferMiBs float64            `json:"xfer_mib_s"` // bytes / slowest transfer
	// Span is IOR's timing of the transfer: from the first rank's start
	// of its first transfer call to the last rank's end of its last, by
	// the wall clock (so the ranks' clocks must agree: one node, or
	// synchronized clocks). XferMiBs, coll_perf's timing, charges each
	// rank from its own start, so a call that synchronizes pays for ranks
	// that left the barrier before it was late, and one that does not
	// does not; Span charges every implementation alike.
	Span     float64 `json:"span_seconds"`
	SpanMiBs float64 `json:"span_mib_s"`
	// Wall is IOR's bandwidth timing: from the first rank's start of its
	// open to the last rank's end of its close (with the sync, if any,
	// in between), by the wall clock. A host implementation that does not
	// synchronize in the transfer meets its ranks' imbalance in sync or
	// close instead, and this is where both are charged alike.
	Wall     float64    `json:"wall_seconds"`
	WallMiBs float64    `json:"wall_mib_s"`
	TotalMiB float64    `json:"total_mib_s"` // bytes / open-to-close
	Bad      int64      `json:"bad_values"`  // values that differ from what was written
	Verify   string     `json:"verify,omitempty"`
	Alloc    AllocStats `json:"alloc"`
	Collio   *Breakdown `json:"collio,omitempty"` // collio runs only

	// Info is the effective hints of the file, on the first write only
	// (not in the JSON of the result: the command stores it once per
	// implementation).
	Info map[string]string `json:"-"`
}

// AllocStats is the Go heap allocated during the transfer calls
// (runtime.MemStats.TotalAlloc after minus before), the maximum over
// ranks. The host MPI-IO allocates in C, which Go does not see, and does
// not say which ranks aggregate: its aggregator fields are -1.
type AllocStats struct {
	Max             int64 `json:"max_bytes"`                // over all ranks
	AggregatorMax   int64 `json:"aggregator_max_bytes"`     // over collio's aggregators; -1 unknown
	OtherMax        int64 `json:"non_aggregator_max_bytes"` // over the other ranks; -1 unknown or none
	AggregatorRanks []int `json:"aggregator_ranks,omitempty"`
}

// Breakdown is collio's own account of the collective calls of one
// operation (collio.Stats, summed over the calls when there are several):
// durations are the slowest rank's, messages and bytes the sums over
// ranks, the rest rank 0's (strategy and reason of the last call).
type Breakdown struct {
	Strategy    string  `json:"strategy"`
	Reason      string  `json:"reason"`
	Domains     string  `json:"domains,omitempty"` // two-phase's file domain rule (metrics.Call.Domains)
	Rounds      int     `json:"rounds"`
	Aggregators int     `json:"aggregators"`
	Plan        float64 `json:"plan_s"`
	Exchange    float64 `json:"req_exchange_s"`
	Shuffle     float64 `json:"shuffle_s"`
	IO          float64 `json:"io_s"`
	RMW         float64 `json:"rmw_s"`
	IOWait      float64 `json:"io_wait_s"`     // the part of io+rmw not hidden behind the exchange
	CacheDrain  float64 `json:"cache_drain_s"` // waiting for E10 cache copies of the call's ranges
	Agree       float64 `json:"agree_s"`       // the closing agreement (E10's post_write)
	Total       float64 `json:"total_s"`
	MsgsSent    int64   `json:"msgs_sent"`
	MsgsRecv    int64   `json:"msgs_recv"`
	BytesSent   int64   `json:"bytes_sent"`
	BytesRecv   int64   `json:"bytes_recv"`
}

// ImplInfo is what is measured once per implementation: peak RSS per rank
// (max and min over ranks) and the effective hints.
type ImplInfo struct {
	Impl       string            `json:"impl"`
	Kind       string            `json:"kind"`
	Workload   string            `json:"workload,omitempty"`
	MCA        map[string]string `json:"mca,omitempty"`
	PeakRSSMax int64             `json:"peak_rss_max_bytes"` // VmHWM; -1 unknown
	PeakRSSMin int64             `json:"peak_rss_min_bytes"`
	// RSSReset tells whether the peak was reset before this
	// implementation ran; if not, it covers the process since its start.
	RSSReset       bool              `json:"peak_rss_reset"`
	EffectiveHints map[string]string `json:"effective_hints,omitempty"`
}

// Sample is one rank's measurements of one write or read, before they are
// reduced over the ranks.
type Sample struct {
	Phase [numPhases]time.Duration
	Alloc int64 // Go heap allocated during the transfer calls
	Calls int64 // transfer calls
	Bad   int64 // values that differ
	// Collio's metrics: Last is the last collective call (strategy,
	// reason), Total the sum over the calls of the operation; Aggs the
	// file's aggregators. HaveStats is false for the host MPI-IO.
	HaveStats   bool
	Last, Total collio.Stats
	Aggs        []int

	m0 runtime.MemStats
	// The wall clock (Unix ns) at the start of the first transfer call
	// and at the end of the last (0: none yet); and of any phase.
	xferFirst, xferLast int64
	wallFirst, wallLast int64
}

// Time runs f and adds its duration to phase p.
func (s *Sample) Time(p int, f func() error) error {
	start := time.Now()
	err := f()
	end := time.Now()
	s.Phase[p] += end.Sub(start)
	if s.wallFirst == 0 {
		s.wallFirst = start.UnixNano()
	}
	s.wallLast = end.UnixNano()
	if p == PhaseXfer {
		if s.xferFirst == 0 {
			s.xferFirst = start.UnixNano()
		}
		s.xferLast = end.UnixNano()
	}
	return err
}

// StartAlloc and StopAlloc bracket the transfer calls to measure the Go
// heap they allocate.
func (s *Sample) StartAlloc() { runtime.ReadMemStats(&s.m0) }

// StopAlloc: see StartAlloc.
func (s *Sample) StopAlloc() {
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	s.Alloc += int64(m1.TotalAlloc - s.m0.TotalAlloc)
}

// CollectCollio copies f's metrics of the collective calls since open
// and its aggregators into s.
func (s *Sample) CollectCollio(f *collio.File) {
	s.Last, s.Total = f.Stats()
	s.Aggs = f.Aggregators()
	s.HaveStats = true
}

// Reduce combines every rank's sample into r (collective over c): the
// slowest rank's time per phase, allocation maxima (split into
// aggregators and others for collio), bad values, messages and bytes
// summed. r's Impl, Kind, Op, Iter and Bytes must be set. The collio
// breakdown is filled when r.Kind is "collio".
func Reduce(c comm.Comm, s *Sample, r *Result) error {
	st := s.Total
	aggAlloc, otherAlloc := int64(-1), int64(-1)
	if r.Kind == "collio" {
		if slices.Contains(s.Aggs, c.Rank()) {
			aggAlloc = s.Alloc
		} else {
			otherAlloc = s.Alloc
		}
	}
	maxv := make([]int64, 0, numPhases+16)
	for _, d := range s.Phase {
		maxv = append(maxv, int64(d))
	}
	maxv = append(maxv, s.Alloc, aggAlloc, otherAlloc,
		int64(st.Plan), int64(st.ReqExchange), int64(st.Shuffle), int64(st.IO), int64(st.RMW), int64(st.IOWait), int64(st.Total),
		int64(st.Rounds), int64(st.Aggregators), int64(st.CacheDrain), int64(st.Agree),
		-s.xferFirst, s.xferLast, // the earliest start, as the largest negative
		-s.wallFirst, s.wallLast)
	if err := c.AllreduceInt64(maxv, maxv, comm.OpMax); err != nil {
		return err
	}
	sumv := []int64{s.Bad, st.MsgsSent, st.MsgsRecv, st.BytesSent, st.BytesRecv}
	if err := c.AllreduceInt64(sumv, sumv, comm.OpSum); err != nil {
		return err
	}
	r.Seconds = map[string]float64{}
	r.Total = 0
	for i, p := range PhaseNames {
		sec := float64(maxv[i]) / 1e9
		r.Seconds[p] = sec
		r.Total += sec
	}
	r.Calls = s.Calls
	r.Bad = sumv[0]
	r.XferMiBs = MiBs(r.Bytes, r.Seconds["xfer"])
	r.TotalMiB = MiBs(r.Bytes, r.Total)
	m := maxv[numPhases:]
	r.Alloc = AllocStats{Max: m[0], AggregatorMax: m[1], OtherMax: m[2], AggregatorRanks: s.Aggs}
	if first, last := -m[14], m[15]; first > 0 && last > first {
		r.Span = float64(last-first) / 1e9
		r.SpanMiBs = MiBs(r.Bytes, r.Span)
	}
	if first, last := -m[16], m[17]; first > 0 && last > first {
		r.Wall = float64(last-first) / 1e9
		r.WallMiBs = MiBs(r.Bytes, r.Wall)
	}
	if r.Kind == "collio" {
		sec := func(ns int64) float64 { return float64(ns) / 1e9 }
		r.Collio = &Breakdown{
			Strategy: s.Last.Strategy, Reason: s.Last.Reason, Domains: s.Last.Domains, Rounds: int(m[10]), Aggregators: int(m[11]),
			Plan: sec(m[3]), Exchange: sec(m[4]), Shuffle: sec(m[5]), IO: sec(m[6]), RMW: sec(m[7]), IOWait: sec(m[8]), Total: sec(m[9]),
			CacheDrain: sec(m[12]), Agree: sec(m[13]),
			MsgsSent: sumv[1], MsgsRecv: sumv[2], BytesSent: sumv[3], BytesRecv: sumv[4],
		}
		if !s.HaveStats || s.Last.Strategy == "" {
			r.Collio.Strategy, r.Collio.Reason = "none", "no collective calls"
		}
	}
	return nil
}

// Agree returns err on the ranks where it happened and an error naming
// the failure elsewhere when any rank failed (collective over c), so that
// every rank stops together.
func Agree(c comm.Comm, err error) error {
	v := []int64{0}
	if err != nil {
		v[0] = 1
	}
	if aerr := c.AllreduceInt64(v, v, comm.OpSum); aerr != nil {
		return aerr
	}
	switch {
	case err != nil:
		return err
	case v[0] > 0:
		return fmt.Errorf("failed on %d other rank(s)", v[0])
	}
	return nil
}

// MiBs is bytes / seconds in MiB/s (0 for no time).
func MiBs(bytes int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(bytes) / (1 << 20) / s
}

// WriteJSON writes v, indented, to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PeakRSSOver returns the peak RSS of this process reduced over the ranks
// (max, min) and whether every rank could reset it beforehand (collective).
func PeakRSSOver(c comm.Comm, reset bool) (mx, mn int64, allReset bool, err error) {
	rss := PeakRSS()
	ok := int64(0)
	if reset {
		ok = 1
	}
	v := []int64{rss, -rss, -ok}
	if err := c.AllreduceInt64(v, v, comm.OpMax); err != nil {
		return 0, 0, false, err
	}
	return v[0], -v[1], v[2] == -1, nil
}
