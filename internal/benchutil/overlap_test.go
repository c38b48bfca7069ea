package benchutil

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/collio/collio/internal/comm"
	"github.com/stretchr/testify/require"
)

func TestOverlapFigures(t *testing.T) {
	for _, c := range []struct {
		r             OverlapResult
		hidden, ratio float64
	}{
		{OverlapResult{Compute: 0, IO: 1, Blocking: 1, Nonblocking: 1.25}, 0, 0.8},
		{OverlapResult{Compute: 1, IO: 1, Blocking: 2, Nonblocking: 1.1}, 0.9, 2 / 1.1},
		{OverlapResult{Compute: 2, IO: 1, Blocking: 3, Nonblocking: 2}, 1, 1.5},
		{OverlapResult{Compute: 0.5, IO: 1, Blocking: 1.5, Nonblocking: 1.25}, 0.5, 1.2},
		{OverlapResult{Compute: 1, IO: 1, Blocking: 2, Nonblocking: 0}, 2, 0},
		// The blocking run's own I/O time (blocking - C), not T_io: here
		// 0.5, all of it hidden.
		{OverlapResult{Compute: 1, IO: 1, Blocking: 1.5, Nonblocking: 1}, 1, 1.5},
		{OverlapResult{Compute: 2, IO: 1, Blocking: 2.5, Nonblocking: 2.25}, 0.5, 2.5 / 2.25},
		// A blocking run shorter than its compute (clock trouble): no figure.
		{OverlapResult{Compute: 1, IO: 1, Blocking: 0.9, Nonblocking: 1}, 0, 0.9},
	} {
		OverlapFigures(&c.r)
		require.InDelta(t, c.hidden, c.r.Hidden, 1e-9, "%+v", c.r)
		require.InDelta(t, c.ratio, c.r.Ratio, 1e-9, "%+v", c.r)
	}
	require.Equal(t, 2.0, Median([]float64{3, 1, 2}))
	require.Equal(t, 2.5, Median([]float64{4, 1, 2, 3}))
	f, err := ParseFactors("0, 0.5,1,2")
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0.5, 1, 2}, f)
	for _, bad := range []string{"", "x", "-1", "1,,2", "NaN"} {
		_, err := ParseFactors(bad)
		require.Error(t, err, bad)
	}
}

// RunOverlap on transfers that are a fixed sleep: one whose nonblocking
// form runs in the background hides about all of the I/O behind a
// compute at least as long; one whose "nonblocking" form does the work at
// the start call hides none. A failure on one rank stops every rank.
func TestRunOverlap(t *testing.T) {
	const io = 30 * time.Millisecond
	fake := func(background bool) OverlapIO {
		return OverlapIO{
			Blocking: func(bool) error { time.Sleep(io); return nil },
			Start: func(bool) (func() error, error) {
				if !background {
					time.Sleep(io)
					return func() error { return nil }, nil
				}
				done := make(chan struct{})
				go func() { time.Sleep(io); close(done) }()
				return func() error { <-done; return nil }, nil
			},
			AfterRead: func() int64 { return 0 },
		}
	}
	// The figures are timings of sleeps: a loaded machine oversleeps,
	// so each form gets a few tries, and a form fails only when no try
	// shows what it should.
	check := func(background bool) error {
		results := make([][]OverlapResult, 2)
		if err := comm.RunWorld(2, 0, func(c comm.Comm) error {
			rs, err := RunOverlap(c, fake(background), []float64{0, 2}, 3, false)
			results[c.Rank()] = rs
			return err
		}); err != nil {
			return err
		}
		rs := results[0]
		if len(rs) != 4 {
			return fmt.Errorf("%d results, want write and read with two factors each", len(rs))
		}
		for _, r := range rs {
			switch {
			case r.IO < 0.8*io.Seconds() || r.IO > 4*io.Seconds():
				return fmt.Errorf("I/O time %.3f s, the transfers sleep %v: %+v", r.IO, io, r)
			case math.IsNaN(r.Hidden):
				return fmt.Errorf("hidden share NaN: %+v", r)
			case r.Factor == 0 && (r.Ratio < 0.5 || r.Ratio > 2):
				return fmt.Errorf("without compute both forms take the I/O time: %+v", r)
			case r.Factor != 0 && background && r.Hidden <= 0.6:
				return fmt.Errorf("background transfers hide the I/O: %+v", r)
			case r.Factor != 0 && !background && r.Hidden >= 0.4:
				return fmt.Errorf("transfers done at the start call hide nothing: %+v", r)
			}
		}
		return nil
	}
	for _, background := range []bool{true, false} {
		var err error
		for try := 0; try < 3; try++ {
			if err = check(background); err == nil {
				break
			}
			t.Logf("background=%v, try %d: %v", background, try, err)
		}
		require.NoError(t, err, "background=%v", background)
	}

	errs := make([]error, 3)
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		x := fake(true)
		x.AfterRead = func() int64 {
			if c.Rank() == 1 {
				return 1
			}
			return 0
		}
		_, errs[c.Rank()] = RunOverlap(c, x, []float64{0}, 1, false)
		return nil
	}))
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		require.Contains(t, err.Error(), "8 wrong values", "rank 1 found one in each of the 8 reads (5 warm-up); rank %d", r)
	}
	errs = make([]error, 3)
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		x := fake(true)
		x.Blocking = func(bool) error {
			if c.Rank() == 2 {
				return errors.New("disk on fire")
			}
			return nil
		}
		_, errs[c.Rank()] = RunOverlap(c, x, []float64{0}, 1, false)
		return nil
	}))
	require.EqualError(t, errs[2], "disk on fire")
	for _, r := range []int{0, 1} {
		require.Error(t, errs[r], fmt.Sprint("rank ", r))
	}
}
