package adio

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

// The shape's schedule: trialCalls calls of each candidate in turn, then
// the fastest, with another tried again firstRetrial calls later.
func TestShapeSchedule(t *testing.T) {
	times := map[string]int64{"twophase": 300, "dynamic": 280, "independent": 320}
	ran := runSchedule(times, 3*trialCalls+firstRetrial+1)
	require.Equal(t, []string{"twophase", "twophase", "dynamic", "dynamic", "independent", "independent"}, ran[:6])
	for i, s := range ran[6 : 6+firstRetrial] {
		require.Equal(t, "twophase", s, "call %d: dynamic is not 10%% faster", 6+i)
	}
	require.Equal(t, "dynamic", ran[len(ran)-1], "the retrial tries a candidate that is not kept")
}

// A candidate whose first call is over slowerPercent slower than another's
// figure gets no second trial call; one within it does.
func TestShapeScheduleDropsClearlySlower(t *testing.T) {
	times := map[string]int64{"twophase": 300, "dynamic": 100, "independent": 200}
	ran := runSchedule(times, 5+firstRetrial+1)
	require.Equal(t, []string{"twophase", "twophase", "dynamic", "dynamic", "independent"}, ran[:5],
		"dynamic is faster: two calls; independent twice as slow as dynamic: one")
	for i, s := range ran[5 : 5+firstRetrial] {
		require.Equal(t, "dynamic", s, "call %d", 5+i)
	}
	require.Equal(t, "independent", ran[len(ran)-1], "the retrial tries a candidate that is not kept")

	// The table's choice is never cut short: nothing to compare it with.
	ran = runSchedule(map[string]int64{"twophase": 900, "dynamic": 100}, 4)
	require.Equal(t, []string{"twophase", "twophase", "dynamic", "dynamic"}, ran)
}

// runSchedule runs calls of a new shape whose candidates each take
// times[c] per MiB (runShape).
func runSchedule(times map[string]int64, calls int) []string {
	cands := []string{"twophase", "dynamic", "independent"}[:len(times)]
	return runShape(newShape(cands, nil), times, calls)
}

// runShape picks calls of sh whose candidates each take times[c] per MiB,
// every call observed before the next pick (as the next call's entry
// record brings it), and returns the candidates run.
func runShape(sh *shape, times map[string]int64, calls int) []string {
	var ran []string
	for range calls {
		i, _ := sh.pick()
		ran = append(ran, sh.cands[i])
		sh.record(i, times[sh.cands[i]])
	}
	return ran
}

// Once every candidate was tried, an older figure does not win over the
// kept one's because the kept one slowed down: the other candidate runs
// again at the next call, and only its recent time counts.
func TestShapeComparesRecentFigures(t *testing.T) {
	sh := newShape([]string{"twophase", "independent"}, nil)
	run := func(times map[string]int64, calls int) []string { return runShape(sh, times, calls) }
	ran := run(map[string]int64{"twophase": 1000, "independent": 1200}, 8)
	require.Equal(t, []string{"twophase", "twophase", "independent", "independent", "twophase", "twophase", "twophase", "twophase"}, ran)

	// The platform slows down for both: independent's trial figure (1200)
	// beats the kept one's (1500), so independent runs once, and its
	// recent time (1800) keeps two-phase.
	ran = run(map[string]int64{"twophase": 1500, "independent": 1800}, 8)
	require.Equal(t, []string{"twophase", "twophase", "twophase", "independent", "twophase", "twophase", "twophase", "twophase"}, ran,
		"once the kept figure is all slow calls, the older one is tried again, once")
	x, _ := sh.figure(1)
	require.Equal(t, int64(1800), x, "a retrial's call is its whole figure")

	// Now independent is really faster: its retrial keeps it.
	ran = run(map[string]int64{"twophase": 1500, "independent": 900}, 2*firstRetrial)
	require.Contains(t, ran, "independent")
	i := slices.Index(ran, "independent")
	require.LessOrEqual(t, strings.Count(strings.Join(ran[i:], " "), "twophase"), 1, "kept from its retrial on, two-phase only retried: %v", ran[i:])
}

// A first call pays for what the strategy's later calls reuse: it is
// compared with the other candidates' first calls, not with their warm
// figures, so a strategy whose first call is slow but whose later calls
// are fast still gets its second trial call, and is kept.
func TestShapeScheduleComparesFirstCalls(t *testing.T) {
	sh := newShape([]string{"twophase", "independent"}, nil)
	times := map[string][]int64{"twophase": {900, 300}, "independent": {400, 100}}
	var ran []string
	runs := map[string]int{}
	for range 6 {
		i, _ := sh.pick()
		c := sh.cands[i]
		ran = append(ran, c)
		sh.record(i, times[c][min(runs[c], len(times[c])-1)])
		runs[c]++
	}
	require.Equal(t, []string{"twophase", "twophase", "independent", "independent", "independent", "independent"}, ran,
		"independent's first call (400) is slower than two-phase's second (300), not than its first (900)")
}

// A candidate replaces the kept one only when switchPercent faster; a
// figure is the least of the last keptSamples times.
func TestKeepFastestMargin(t *testing.T) {
	sh := &shape{cands: []string{"a", "b"}, perMiB: [][]int64{{1000}, {950}}}
	sh.keepFastest()
	require.Equal(t, 0, sh.best, "5%% faster is noise")
	sh.perMiB[1] = append(sh.perMiB[1], 900)
	sh.keepFastest()
	require.Equal(t, 1, sh.best)

	m := &measuring{}
	sh = &shape{cands: []string{"a"}, perMiB: make([][]int64, 1)}
	for _, ns := range []int64{10, 50, 40, 30} {
		m.timing(sh, 0, 1, 1<<20)
		m.observe(ns)
	}
	require.Equal(t, []int64{50, 40, 30}, sh.perMiB[0])
	x, _ := sh.figure(0)
	require.Equal(t, int64(30), x)
	m.timing(sh, 0, 2, 1<<20)
	m.observe(-1)
	require.Len(t, sh.perMiB[0], 3, "a call not every rank timed adds nothing")
}

// Where the table's choice is slow on this platform, the measured choice
// finds a faster strategy, every rank alike, and the bytes are the same as
// with the table alone. Independent I/O's sieving takes a byte-range lock
// per rank and call; the faulty driver makes each lock take 40 ms, which no
// rule sees.
func TestMeasuredChoiceLeavesSlowTableChoice(t *testing.T) {
	const calls, records = 16, 8
	run := func(measure string, more ...string) ([][]string, []byte) {
		path := "faulty:" + tempPath(t, "f"+measure+strings.Join(more, ""))
		h := map[string]string{"collio_fault": "slow=lock:40ms", hints.CollioMeasure: measure}
		for _, kv := range more {
			k, v, _ := strings.Cut(kv, "=")
			h[k] = v
		}
		var mu sync.Mutex
		chose := make([][]string, 4)
		writeRecords(t, path, h, calls, records, nil, func(r, i int, last metrics.Call) error {
			mu.Lock()
			chose[r] = append(chose[r], last.Strategy)
			mu.Unlock()
			if i == calls-1 && r == 0 && measure == hints.Enable && len(more) == 0 && !strings.Contains(last.Reason, "measured choice") {
				return fmt.Errorf("reason %q does not say how it was measured", last.Reason)
			}
			return nil
		})
		return chose, readFile(t, strings.TrimPrefix(path, "faulty:"))
	}
	table, tableBytes := run(hints.Disable)
	measured, measuredBytes := run(hints.Enable)
	require.Equal(t, tableBytes, measuredBytes)
	for r := range 4 {
		require.Equal(t, measured[0], measured[r], "rank %d chose otherwise", r)
		require.Equal(t, "independent", table[r][calls-1])
	}
	// (Dynamic's second trial call depends on its first call's time.)
	require.Equal(t, []string{"independent", "independent", "twophase", "twophase", "dynamic"}, measured[0][:5])
	require.NotEqual(t, "independent", measured[0][calls-1], "kept the slow choice: %v", measured[0])

	// An explicit hint is obeyed: a forced strategy is never measured,
	// and collective buffering enabled never tries independent I/O.
	forced, _ := run(hints.Enable, "collio_strategy=independent")
	require.Equal(t, slices.Repeat([]string{"independent"}, calls), forced[0])
	enabled, enabledBytes := run(hints.Enable, "romio_cb_write=enable")
	require.Equal(t, tableBytes, enabledBytes)
	require.NotContains(t, enabled[0], "independent")
	require.Equal(t, []string{"twophase", "twophase", "dynamic"}, enabled[0][:3])
}

// Where node clients hold writes back (GlusterFS across nodes), a timed
// independent write syncs before its time is taken, whether the
// aggregating candidates' syncs are deferred or not; the calls that
// repeat the kept choice without agreement, and files whose node caches
// are coherent, do not sync.
func TestTimedIndependentWriteSyncsWhereClientsHoldWritesBack(t *testing.T) {
	const calls, records, slow = 24, 8, 30 * time.Millisecond
	for _, tc := range []struct {
		nodeCaches bool
		deferred   string
	}{{true, hints.Disable}, {true, hints.Enable}, {false, hints.Disable}} {
		nodeCaches := tc.nodeCaches
		path := "faulty:" + tempPath(t, fmt.Sprint("wb", nodeCaches, tc.deferred))
		h := map[string]string{"collio_fault": "slow=sync:" + slow.String(), hints.CollioMeasure: hints.Enable, hints.CollioDeferredSync: tc.deferred}
		var timed, repeated atomic.Int32
		writeRecords(t, path, h, calls, records, func(f *File) { f.nodeCaches = nodeCaches }, func(_, i int, last metrics.Call) error {
			if last.Strategy != hints.StrategyIndependent {
				return nil
			}
			synced := last.Publish >= slow
			switch measured := strings.Contains(last.Reason, "measured choice"); {
			case measured && synced != nodeCaches:
				return fmt.Errorf("call %d (%s): synced %v with node caches %v", i, last.Reason, synced, nodeCaches)
			case measured:
				timed.Add(1)
			case synced:
				return fmt.Errorf("call %d (%s) synced", i, last.Reason)
			default:
				repeated.Add(1)
			}
			return nil
		})
		require.NotZero(t, timed.Load(), "no timed independent write")
		if !nodeCaches {
			require.NotZero(t, repeated.Load(), "no independent write repeated without agreement")
		}
	}
}

// writeRecords has 4 ranks write calls collective writes of records
// 4-byte records each to path with hints h, interleaved one record per
// rank in each 16-byte tile (data density 1/4, which the table gives to
// independent I/O), calling setup on each rank's file after opening it
// and check after each call with that call's metrics.
func writeRecords(t *testing.T, path string, h map[string]string, calls, records int, setup func(*File), check func(rank, call int, last metrics.Call) error) {
	ft := must(layout.Resized(layout.Bytes(4), 0, 16))
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		if setup != nil {
			setup(f)
		}
		if err := f.SetView(View{Disp: int64(4 * r), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
			return err
		}
		for i := range calls {
			if _, err := f.WriteAtAll(Bytes(rankData(r+4*i, int64(4*records))), int64(i*4*records)); err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
			if err := check(r, i, f.LastCall()); err != nil {
				return err
			}
		}
		return f.Close()
	})
}

// interleavedRanges are 8 ranks' ranges that overlap, for the candidate
// tests.
func interleavedRanges() []coll.Range {
	ranges := make([]coll.Range, 8)
	for r := range ranges {
		ranges[r] = coll.Range{Start: int64(r), End: int64(r) + 16}
	}
	return ranges
}

// candidatesFile is a file with four aggregators that collio picks and
// automatic collective buffering, for the candidate tests; mod, when set,
// changes it.
func candidatesFile(mod func(f *File)) *File {
	f := &File{aggs: []int{0, 2, 4, 6}}
	f.cfg.autoAggregators = true
	f.cfg.cb = [2]string{hints.Automatic, hints.Automatic}
	if mod != nil {
		mod(f)
	}
	return f
}

// On several nodes with automatic aggregators, small writes also try
// two-phase on half of the aggregators; not where a hint names them, on
// one node, on a striped file system, where the volume rule thins them
// already, for large shares per aggregator, nor for reads.
func TestCandidatesWithFewerAggregators(t *testing.T) {
	ranges := interleavedRanges()
	base := situation{write: true, ranges: ranges, nodes: 4, bytes: 256 << 10, pieces: 64}
	file := candidatesFile
	aggsOf := func(how []variant) []int {
		a := make([]int, len(how))
		for i, v := range how {
			a[i] = v.aggs
		}
		return a
	}
	cands, how := file(nil).candidates(base, hints.StrategyTwoPhase)
	require.Equal(t, []string{"twophase", "twophase", "tam", "independent"}, cands)
	require.Equal(t, []int{0, 2, 0, 0}, aggsOf(how))
	sh := &shape{cands: cands, how: how}
	require.Equal(t, "twophase, twophase on 2 aggregators, tam, independent", sh.labels())
	require.Equal(t, 2, sh.aggregators(1))
	require.Equal(t, 0, (*shape)(nil).aggregators(0))

	two := file(func(f *File) { f.aggs = f.aggs[:2] })
	cands, how = two.candidates(base, hints.StrategyTwoPhase)
	require.Equal(t, "twophase, twophase on 1 aggregator, tam, independent", (&shape{cands: cands, how: how}).labels())

	three := file(func(f *File) { f.aggs = f.aggs[:3] })
	_, how = three.candidates(base, hints.StrategyTwoPhase)
	require.Equal(t, 2, how[1].aggs, "half of 3, rounded up")

	for what, tc := range map[string]struct {
		f *File
		s situation
	}{
		"cb_nodes given": {file(func(f *File) { f.cfg.autoAggregators = false }), base},
		"volume rule":    {file(func(f *File) { f.cfg.bytesPerAgg = 1 << 20 }), base},
		"one aggregator": {file(func(f *File) { f.aggs = f.aggs[:1] }), base},
		"one node":       {file(nil), situation{write: true, ranges: ranges, nodes: 1, bytes: 1 << 20}},
		"striped":        {file(nil), situation{write: true, ranges: ranges, nodes: 4, striped: true, bytes: 1 << 20}},
		"large shares":   {file(nil), situation{write: true, ranges: ranges, nodes: 4, bytes: 4 * fewerAggregatorsBelow}},
		"reads":          {file(nil), situation{ranges: ranges, nodes: 4, bytes: 256 << 10}},
	} {
		_, how := tc.f.candidates(tc.s, hints.StrategyTwoPhase)
		require.NotContains(t, aggsOf(how), 2, what)
	}
}

// Writes on several nodes, where two-phase draws affinity domains on its
// own, also try it on ROMIO's domains; not where collio_file_domains
// names the domains, on one node, on a striped file system, on one
// aggregator, nor for reads.
func TestCandidatesWithoutAffinityDomains(t *testing.T) {
	ranges := interleavedRanges()
	base := situation{write: true, ranges: ranges, nodes: 4, bytes: 4 << 20, pieces: 64}
	file := func(mod func(f *File)) *File {
		return candidatesFile(func(f *File) {
			f.cfg.fileDomains = hints.DomainsAuto
			if mod != nil {
				mod(f)
			}
		})
	}
	cands, how := file(nil).candidates(base, hints.StrategyTwoPhase)
	sh := &shape{cands: cands, how: how}
	require.Equal(t, "twophase, twophase without affinity domains, tam, independent", sh.labels())
	require.True(t, sh.noAffinity(1))
	require.False(t, sh.noAffinity(0))
	require.False(t, (*shape)(nil).noAffinity(0))

	small := base
	small.bytes = 256 << 10
	cands, how = file(nil).candidates(small, hints.StrategyTwoPhase)
	require.Equal(t, "twophase, twophase without affinity domains, twophase on 2 aggregators, tam, independent",
		(&shape{cands: cands, how: how}).labels())

	cands, how = file(nil).candidates(base, hints.StrategyTAM)
	require.Equal(t, "tam, twophase, twophase without affinity domains, independent", (&shape{cands: cands, how: how}).labels())

	for what, tc := range map[string]struct {
		f *File
		s situation
	}{
		"domains hint":   {file(func(f *File) { f.cfg.fileDomains = hints.DomainsAffinity }), base},
		"even hint":      {file(func(f *File) { f.cfg.fileDomains = hints.DomainsEven }), base},
		"one aggregator": {file(func(f *File) { f.aggs = f.aggs[:1] }), base},
		"one node":       {file(nil), situation{write: true, ranges: ranges, nodes: 1, bytes: 4 << 20}},
		"striped":        {file(nil), situation{write: true, ranges: ranges, nodes: 4, striped: true, bytes: 4 << 20}},
		"reads":          {file(nil), situation{ranges: ranges, nodes: 4, bytes: 4 << 20}},
	} {
		_, how := tc.f.candidates(tc.s, hints.StrategyTwoPhase)
		require.NotContains(t, how, variant{noAffinity: true}, what)
	}
}

// Across (virtual) nodes the measured choice runs two-phase on half of
// the aggregators for its trial calls: every rank alike, the call's
// aggregators really fewer, and the bytes those of the table alone.
func TestMeasuredChoiceTriesFewerAggregators(t *testing.T) {
	const calls, records = 16, 8
	run := func(measure string) ([][]string, [][]int, []byte) {
		path := tempPath(t, "fewer"+measure)
		h := map[string]string{hints.CollioMeasure: measure, hints.CollioNodeSize: "1"}
		var mu sync.Mutex
		reasons, aggs := make([][]string, 4), make([][]int, 4)
		writeRecords(t, path, h, calls, records, nil, func(r, i int, last metrics.Call) error {
			mu.Lock()
			defer mu.Unlock()
			reasons[r] = append(reasons[r], last.Reason)
			aggs[r] = append(aggs[r], last.Aggregators)
			return nil
		})
		return reasons, aggs, readFile(t, path)
	}
	_, tableAggs, tableBytes := run(hints.Disable)
	reasons, aggs, bytes := run(hints.Enable)
	require.Equal(t, tableBytes, bytes)
	require.Equal(t, 4, tableAggs[0][0], "one aggregator per virtual node")
	tried := 0
	for i, reason := range reasons[0] {
		for r := range 4 {
			require.Equal(t, reason, reasons[r][i], "call %d: rank %d chose otherwise", i, r)
		}
		if strings.Contains(reason, "trying twophase on 2 aggregators") {
			tried++
			require.Equal(t, 2, aggs[0][i], "call %d: %s", i, reason)
		}
	}
	require.NotZero(t, tried, "never tried: %q", reasons[0])
}
