package benchutil

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/stretchr/testify/require"
)

// Reduce: maxima of phases and durations, sums of bad values and
// messages, the allocation split by aggregators.
func TestReduce(t *testing.T) {
	const n = 3
	out := make([]Result, n)
	err := comm.RunWorld(n, 1, func(c comm.Comm) error {
		r := c.Rank()
		s := Sample{Alloc: int64(100 * (r + 1)), Calls: 2, Bad: int64(r), HaveStats: true, Aggs: []int{0}}
		s.Phase[PhaseXfer] = time.Duration(r+1) * time.Second
		s.Phase[PhaseOpen] = time.Duration(3-r) * time.Millisecond
		s.Last = collio.Stats{Strategy: "twophase", Reason: "accesses interleave"}
		s.Total = collio.Stats{Plan: time.Duration(r) * time.Millisecond, IOWait: time.Second, Rounds: 2, Aggregators: 1, MsgsSent: 5, BytesSent: 10}
		res := Result{Impl: "collio", Kind: "collio", Op: "write", Iter: 1, Bytes: 6 << 20}
		if err := Reduce(c, &s, &res); err != nil {
			return err
		}
		out[r] = res
		return nil
	})
	require.NoError(t, err)
	r := out[1]
	require.Equal(t, 3.0, r.Seconds["xfer"])
	require.Equal(t, 0.003, r.Seconds["open"])
	require.InDelta(t, 3.003, r.Total, 1e-9)
	require.InDelta(t, 2.0, r.XferMiBs, 1e-9)
	require.Equal(t, int64(3), r.Bad)
	require.Equal(t, int64(2), r.Calls)
	require.Equal(t, AllocStats{Max: 300, AggregatorMax: 100, OtherMax: 300, AggregatorRanks: []int{0}}, r.Alloc)
	require.Equal(t, "twophase", r.Collio.Strategy)
	require.Equal(t, 0.002, r.Collio.Plan)
	require.Equal(t, 1.0, r.Collio.IOWait)
	require.Equal(t, 2, r.Collio.Rounds)
	require.Equal(t, 1, r.Collio.Aggregators)
	require.Equal(t, int64(15), r.Collio.MsgsSent)
	require.Equal(t, out[0], out[2], "every rank gets the same result")

	// The host MPI-IO: no breakdown, unknown split.
	err = comm.RunWorld(2, 1, func(c comm.Comm) error {
		res := Result{Impl: "mpiio:romio321", Kind: "mpiio", Op: "read"}
		if err := Reduce(c, &Sample{Alloc: 7}, &res); err != nil {
			return err
		}
		if res.Collio != nil || res.Alloc.AggregatorMax != -1 || res.Alloc.OtherMax != -1 || res.Alloc.Max != 7 {
			t.Errorf("host result %+v", res)
		}
		return nil
	})
	require.NoError(t, err)
}

func TestVerifiedText(t *testing.T) {
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{Op: "read"}, "ok"},
		{Result{Op: "write"}, "-"},
		{Result{Op: "write", Verify: VerifyByRead}, "(by read)"},
		{Result{Op: "write", Verify: VerifyReadBack}, "ok (read back)"},
		{Result{Op: "read", Verify: VerifyNone}, "not checked"},
		{Result{Op: "read", Verify: VerifyValues, Bad: 2}, "2 bad"},
	} {
		require.Equal(t, c.want, VerifiedText(c.r), "%+v", c.r)
	}
}

func TestParseFormatBytes(t *testing.T) {
	for in, want := range map[string]int64{"4k": 4096, "1m": 1 << 20, "64KiB": 64 << 10, "2G": 2 << 30, "100": 100, "3MB": 3 << 20} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "k", "-1", "1x", "1.5m", "1t", "99999999999g"} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
	}
	require.Equal(t, "4 KiB", FormatBytes(4096))
	require.Equal(t, "1 MiB", FormatBytes(1<<20))
	require.Equal(t, "1536 KiB", FormatBytes(3<<19))
	require.Equal(t, "1.50 MiB", FormatBytes(3<<19+1))
	require.Equal(t, "1000 B", FormatBytes(1000))
}

func TestSplit1(t *testing.T) {
	total := 0
	for i := range 4 {
		s, n := Split1(10, 4, i)
		require.Equal(t, total, s)
		total += n
	}
	require.Equal(t, 10, total)
}

// Progress prints nothing during the delay, then at most one line per
// interval (and on a phase change); nil prints nothing.
func TestProgress(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	p := &Progress{w: &b, prog: "x", Delay: time.Second, Every: time.Second, now: func() time.Time { return now }, start: now}
	p.Update("write", 1, 10)
	now = now.Add(1500 * time.Millisecond)
	p.Update("write", 2, 10)
	now = now.Add(100 * time.Millisecond)
	p.Update("write", 3, 10)
	p.Update("read", 0, 10)
	now = now.Add(2 * time.Second)
	p.Update("read", 5, 10)
	p.Done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3, b.String())
	require.Contains(t, lines[0], "x: write  20.0%    1.5s")
	require.Contains(t, lines[2], "read  50.0%")
	var nilp *Progress
	nilp.Update("a", 1, 2)
	nilp.Done()
	require.Nil(t, NewProgress("x", false))
}

// Span: from the earliest rank's first transfer start to the latest
// rank's last transfer end, across ranks and calls.
func TestReduceSpan(t *testing.T) {
	base := time.Now().UnixNano()
	out := make([]Result, 3)
	err := comm.RunWorld(3, 1, func(c comm.Comm) error {
		r := c.Rank()
		var s Sample
		// Rank r starts at base+r ms and ends at base+10-r ms, in two calls.
		s.xferFirst, s.xferLast = base+int64(r)*1e6, base+int64(10-r)*1e6
		s.Phase[PhaseXfer] = time.Duration(10-2*r) * time.Millisecond
		// Open to close: rank r from base-r ms to base+12+r ms.
		s.wallFirst, s.wallLast = base-int64(r)*1e6, base+int64(12+r)*1e6
		res := Result{Kind: "mpiio", Op: "write", Bytes: 10 << 20}
		if err := Reduce(c, &s, &res); err != nil {
			return err
		}
		out[r] = res
		return nil
	})
	require.NoError(t, err)
	require.InDelta(t, 0.010, out[0].Span, 1e-12, "rank 0's start to rank 0's end")
	require.InDelta(t, 1000.0, out[0].SpanMiBs, 1e-6)
	require.InDelta(t, 0.010, out[2].Seconds["xfer"], 1e-12)
	require.InDelta(t, 0.016, out[1].Wall, 1e-12, "rank 2's open start to rank 2's close end")
	require.InDelta(t, 625.0, out[1].WallMiBs, 1e-6)

	// Time records the wall clock of the transfer phase, and of the
	// first and last phase of any kind.
	var s Sample
	require.NoError(t, s.Time(PhaseOpen, func() error { return nil }))
	require.Zero(t, s.xferFirst)
	open := s.wallFirst
	require.NotZero(t, open)
	require.NoError(t, s.Time(PhaseXfer, func() error { time.Sleep(time.Millisecond); return nil }))
	first := s.xferFirst
	require.NoError(t, s.Time(PhaseXfer, func() error { return nil }))
	require.Equal(t, first, s.xferFirst, "the first call's start stays")
	require.Greater(t, s.xferLast, first, "the last call's end is after the first call's start")
	require.NoError(t, s.Time(PhaseClose, func() error { return nil }))
	require.Equal(t, open, s.wallFirst, "the open's start stays")
	require.GreaterOrEqual(t, s.wallLast, s.xferLast, "the close ends last")

	// A rank with no transfer call: no span.
	err = comm.RunWorld(2, 1, func(c comm.Comm) error {
		var s Sample
		if c.Rank() == 0 {
			s.xferFirst, s.xferLast = base, base+1e6
		}
		res := Result{Kind: "mpiio", Bytes: 1}
		if err := Reduce(c, &s, &res); err != nil {
			return err
		}
		if res.Span != 0 {
			t.Errorf("span %v with a rank that made no call", res.Span)
		}
		return nil
	})
	require.NoError(t, err)
}
