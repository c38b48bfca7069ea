package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	us = int64(time.Microsecond)
	ms = int64(time.Millisecond)
)

// testParams: 4 targets of 1 MiB stripes at 1 MiB per ms, 10 us latency,
// 1 ms lock revocations. One full stripe on one target costs 1.01 ms.
func testParams() params {
	return params{stripeSize: 1 << 20, stripeCount: 4, bandwidth: 1 << 30 * 1000 / 1024,
		latency: 10 * time.Microsecond, lockLatency: time.Millisecond}
}

func newModel(p params) (model, *state) {
	return model{p: p}, newMemState(p.stripeCount, 8)
}

func TestBookOneStripe(t *testing.T) {
	m, s := newModel(testParams())
	end, rev := m.book(s, 0, 1, 0, 1<<20, true)
	assert.Equal(t, 10*us+ms, end)
	assert.Zero(t, rev)
	// Half a stripe takes half the transfer time.
	end, _ = m.book(s, 5*ms, 1, 1<<20, 1<<19, true)
	assert.Equal(t, 5*ms+10*us+ms/2, end)
}

func TestBookStripesRunInParallelOnTheirTargets(t *testing.T) {
	m, s := newModel(testParams())
	// Four stripes on four targets: as long as one.
	end, _ := m.book(s, 0, 1, 0, 4<<20, true)
	assert.Equal(t, 10*us+ms, end)
	// Eight stripes: two per target, one latency per target and request.
	end, _ = m.book(s, 10*ms, 1, 0, 8<<20, true)
	assert.Equal(t, 10*ms+10*us+2*ms, end)
	// An unaligned 2 MiB request touches three stripes (0.5 + 1 + 0.5 MiB).
	end, _ = m.book(s, 20*ms, 1, 1<<19, 2<<20, true)
	assert.Equal(t, 20*ms+10*us+ms, end)
}

func TestBookTargetQueues(t *testing.T) {
	m, s := newModel(testParams())
	end1, _ := m.book(s, 0, 1, 0, 1<<20, true)
	// Another writer on another stripe of the same target (stripe 4) waits.
	end2, rev := m.book(s, 0, 2, 4<<20, 1<<20, true)
	assert.Zero(t, rev)
	assert.Equal(t, end1+10*us+ms, end2)
	// A third on another target does not.
	end3, _ := m.book(s, 0, 3, 1<<20, 1<<20, true)
	assert.Equal(t, end1, end3)
}

func TestBookStartTarget(t *testing.T) {
	p := testParams()
	p.startTarget = 3
	m, s := newModel(p)
	m.book(s, 0, 1, 0, 1, true) // stripe 0 on target 3
	assert.Zero(t, s.load(s.busyIndex(0)))
	assert.NotZero(t, s.load(s.busyIndex(3)))
}

func TestBookUnlimitedBandwidth(t *testing.T) {
	p := testParams()
	p.bandwidth = 0
	m, s := newModel(p)
	end, _ := m.book(s, 0, 1, 0, 100<<20, true)
	assert.Equal(t, 10*us, end)
	end, _ = m.book(s, 0, 1, 0, 0, true)
	assert.Zero(t, end, "an empty request is free")
}

func TestBookLocks(t *testing.T) {
	const a, b, c = 11, 22, 33
	cases := []struct {
		name        string
		ops         []lockOp
		revocations []int64
	}{
		{"same writer keeps its lock", ops(a, true, a, true, a, false, a, true), []int64{0, 0, 0, 0}},
		{"writers alternate", ops(a, true, b, true, a, true), []int64{0, 1, 1}},
		{"readers share", ops(a, false, b, false, c, false, a, false), []int64{0, 0, 0, 0}},
		{"reader revokes a writer", ops(a, true, b, false, c, false), []int64{0, 1, 0}},
		{"writer revokes readers", ops(a, false, b, false, c, true, c, true), []int64{0, 0, 1, 0}},
		{"sole reader upgrades for free", ops(a, false, a, true, b, false), []int64{0, 0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, s := newModel(testParams())
			now := int64(0)
			for i, op := range tc.ops {
				end, rev := m.book(s, now, op.writer, 0, 100, op.write)
				assert.Equal(t, tc.revocations[i], rev, "op %d", i)
				want := now + 10*us + m.transfer(100) + rev*ms
				assert.Equal(t, want, end, "op %d", i)
				now = end
			}
		})
	}
}

type lockOp struct {
	writer int64
	write  bool
}

// ops builds lock operations from writer, write pairs.
func ops(args ...any) []lockOp {
	var out []lockOp
	for i := 0; i < len(args); i += 2 {
		out = append(out, lockOp{int64(args[i].(int)), args[i+1].(bool)})
	}
	return out
}

func TestBookRevocationsPerStripe(t *testing.T) {
	m, s := newModel(testParams())
	m.book(s, 0, 1, 0, 8<<20, true) // writer 1 holds stripes 0..7
	// Writer 2 takes stripes 0..7: two revocations per target.
	end, rev := m.book(s, 100*ms, 2, 0, 8<<20, true)
	assert.Equal(t, int64(8), rev)
	assert.Equal(t, 100*ms+10*us+2*ms+2*ms, end)
}

func TestBookSlotEviction(t *testing.T) {
	m, s := newModel(testParams()) // 8 slots: stripes 0 and 8 share one
	m.book(s, 0, 1, 0, 1, true)
	m.book(s, 0, 2, 8<<20, 1, true) // evicts writer 1's lock on stripe 0
	_, rev := m.book(s, 0, 3, 0, 1, true)
	assert.Zero(t, rev, "an evicted lock costs nothing to take")
}

func TestBookClockRestart(t *testing.T) {
	m, s := newModel(testParams())
	m.book(s, 1000*ms, 1, 0, 1<<20, true)
	// The clock reads less than before: the state is from an earlier boot.
	end, _ := m.book(s, 5*ms, 1, 0, 1<<20, true)
	assert.Equal(t, 5*ms+10*us+ms, end)
}

func TestParamsEncodeRoundTrip(t *testing.T) {
	p := testParams()
	p.startTarget = 2
	got, err := decodeParams("x", p.encode())
	require.NoError(t, err)
	assert.Equal(t, p, got)

	for _, bad := range []string{"", "collio-sim 1\n", "collio-sim 1\nstripe_size=x\n", "nope\n",
		"collio-sim 1\nstripe_size=0\nstripe_count=1\nstart_target=0\nbandwidth=0\nlatency_ns=0\nlock_latency_ns=0\n"} {
		_, err := decodeParams("x", []byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestTimelineBooksAsTheFileModel(t *testing.T) {
	p := testParams()
	tl, err := NewTimeline(Params{StripeSize: p.stripeSize, StripeCount: p.stripeCount, Bandwidth: p.bandwidth,
		Latency: p.latency, LockLatency: p.lockLatency})
	require.NoError(t, err)
	end, rev := tl.Book(0, 1, 0, 1<<20, true)
	assert.Equal(t, 10*us+ms, end)
	assert.Zero(t, rev)
	// Writer 2 takes stripe 0's lock from writer 1 and queues behind it.
	end, rev = tl.Book(0, 2, 0, 1<<20, true)
	assert.Equal(t, int64(1), rev)
	assert.Equal(t, 2*(10*us+ms)+ms, end)
}

func TestTimelineParams(t *testing.T) {
	d := DefaultParams()
	require.NoError(t, d.Check())
	assert.Equal(t, int64(1<<20), d.StripeSize)
	assert.Equal(t, 4, d.StripeCount)
	for _, bad := range []Params{{StripeSize: 0, StripeCount: 1}, {StripeSize: 1, StripeCount: 0},
		{StripeSize: 1, StripeCount: 2, StartTarget: 2}, {StripeSize: 1, StripeCount: 1, Latency: -1}} {
		_, err := NewTimeline(bad)
		assert.Error(t, err, "%+v", bad)
	}
}
