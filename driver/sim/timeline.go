package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/collio/collio/hints"
)

// Params are the emulated file system's properties, for callers that
// apply the cost model without files (the scale model of collio sim).
type Params struct {
	StripeSize  int64
	StripeCount int
	StartTarget int
	Bandwidth   int64 // bytes per second per target; 0 = unlimited
	Latency     time.Duration
	LockLatency time.Duration
}

// DefaultParams are the collio_sim_* hints' defaults.
func DefaultParams() Params {
	num := func(key string) int64 {
		spec, ok := hints.Lookup(key)
		if !ok {
			panic("sim: hint " + key + " is not in the hints table")
		}
		n, err := strconv.ParseInt(spec.Default, 10, 64)
		if err != nil {
			panic("sim: default of " + key + ": " + err.Error())
		}
		return n
	}
	return Params{
		StripeSize:  num(hints.CollioSimStripeSize),
		StripeCount: int(num(hints.CollioSimStripeCount)),
		Bandwidth:   num(hints.CollioSimBandwidth),
		Latency:     time.Duration(num(hints.CollioSimLatency)) * time.Microsecond,
		LockLatency: time.Duration(num(hints.CollioSimLockLatency)) * time.Microsecond,
	}
}

// Check reports parameters the model cannot use.
func (p Params) Check() error {
	switch {
	case p.StripeSize < 1:
		return fmt.Errorf("sim: stripe size %d; need at least 1 byte", p.StripeSize)
	case p.StripeCount < 1 || p.StripeCount > maxTargets:
		return fmt.Errorf("sim: stripe count %d outside [1, %d]", p.StripeCount, maxTargets)
	case p.StartTarget < 0 || p.StartTarget >= p.StripeCount:
		return fmt.Errorf("sim: start target %d is not in [0, %d)", p.StartTarget, p.StripeCount)
	case p.Bandwidth < 0 || p.Latency < 0 || p.LockLatency < 0:
		return fmt.Errorf("sim: negative bandwidth or latency")
	}
	return nil
}

// Timeline is the cost model of the sim driver on private in-memory
// state: target queues and stripe locks, with time given by the caller
// rather than a clock. It is what a sim file books, without the file.
type Timeline struct {
	m model
	s *state
}

// NewTimeline starts a timeline with every target free at time 0 and no
// stripe locked.
func NewTimeline(p Params) (*Timeline, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	m := model{p: params{stripeSize: p.StripeSize, stripeCount: p.StripeCount, startTarget: p.StartTarget,
		bandwidth: p.Bandwidth, latency: p.Latency, lockLatency: p.LockLatency}}
	return &Timeline{m: m, s: newMemState(p.StripeCount, defaultSlots)}, nil
}

// Book issues the request [off, off+n) by writer (any nonzero id) at
// time now (ns) and returns when it completes and how many stripe locks
// it revoked, exactly as a sim file would.
func (t *Timeline) Book(now, writer, off, n int64, write bool) (end, revocations int64) {
	return t.m.book(t.s, now, writer, off, n, write)
}
