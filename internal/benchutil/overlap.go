package benchutil

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/internal/comm"
)

// The overlap mode of collperf and iorbench (like bench/c/overlap.c): how
// much of a collective transfer's time a nonblocking call hides behind
// computation. First the transfer alone (T_io, blocking, median of the
// rounds); then, for each compute time C = f × T_io, compute C then the
// blocking call, against the nonblocking call started, compute C, wait,
// in alternating rounds.
// The compute makes no MPI call (Compute: asleep, or spinning).

// OverlapIO is one collective transfer of the benchmark in its two forms.
type OverlapIO struct {
	// Blocking runs the blocking call (write_all or read_all).
	Blocking func(write bool) error
	// Start starts the nonblocking call and returns its wait.
	Start func(write bool) (wait func() error, err error)
	// AfterRead checks what a read brought and clears the buffer for the
	// next one; it returns the number of wrong values.
	AfterRead func() int64
}

// OverlapResult is one direction and compute time: times in seconds, the
// slowest rank's, medians over the rounds.
type OverlapResult struct {
	Op          string  `json:"op"` // "write" or "read"
	Factor      float64 `json:"factor"`
	Compute     float64 `json:"compute_s"`
	IO          float64 `json:"io_s"`
	Blocking    float64 `json:"blocking_s"`
	Nonblocking float64 `json:"nonblocking_s"`
	// Hidden is the share of the I/O time the nonblocking call hid:
	// (blocking − nonblocking) / min(C, blocking − C), where blocking − C
	// is the I/O time of the blocking run it is compared with (T_io,
	// timed back to back before, drifts from it: a call right after a
	// sleep gets more of a busy machine's CPU); 0 without compute.
	Hidden float64 `json:"hidden"`
	// Ratio is the nonblocking call's bandwidth over the blocking one's
	// (blocking / nonblocking time): the figure that matters without
	// compute.
	Ratio float64 `json:"nb_ratio"`
}

// OverlapFigures computes Hidden and Ratio from the times.
func OverlapFigures(r *OverlapResult) {
	r.Hidden, r.Ratio = 0, 0
	if m := min(r.Compute, r.Blocking-r.Compute); r.Compute > 0 && m > 0 {
		r.Hidden = (r.Blocking - r.Nonblocking) / m
	}
	if r.Nonblocking > 0 {
		r.Ratio = r.Blocking / r.Nonblocking
	}
}

// ParseFactors reads a comma-separated list of compute times as multiples
// of the I/O time (e.g. 0,0.5,1,2).
func ParseFactors(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f >= 0 && f <= 1000) {
			return nil, fmt.Errorf("%q is not a compute factor in [0, 1000]", p)
		}
		out = append(out, f)
	}
	return out, nil
}

// RunOverlap measures x on every rank of c (collective): writes first,
// then reads of what they wrote, each for every factor, each time the
// median of rounds. A failure on any rank stops every rank with an error.
func RunOverlap(c comm.Comm, x OverlapIO, factors []float64, rounds int, busy bool) ([]OverlapResult, error) {
	var bad int64
	// one runs one call (nonblocking or not) with compute d and returns
	// the slowest rank's time.
	one := func(write, nonblocking bool, d time.Duration) (float64, error) {
		if err := c.Barrier(); err != nil {
			return 0, err
		}
		start := time.Now()
		var err error
		if nonblocking {
			var wait func() error
			if wait, err = x.Start(write); err == nil {
				Compute(d, busy)
				err = wait()
			}
		} else {
			Compute(d, busy)
			err = x.Blocking(write)
		}
		el := time.Since(start)
		if err == nil && !write && x.AfterRead != nil {
			bad += x.AfterRead()
		}
		failed := int64(0)
		if err != nil {
			failed = 1
		}
		v := []int64{int64(el), failed}
		if rerr := c.AllreduceInt64(v, v, comm.OpMax); rerr != nil {
			return 0, rerr
		}
		switch {
		case err != nil:
			return 0, err
		case v[1] != 0:
			return 0, fmt.Errorf("a transfer failed on another rank")
		}
		return time.Duration(v[0]).Seconds(), nil
	}
	timed := func(write, nonblocking bool, d time.Duration) (float64, error) {
		ts := make([]float64, rounds)
		for i := range ts {
			var err error
			if ts[i], err = one(write, nonblocking, d); err != nil {
				return 0, err
			}
		}
		return Median(ts), nil
	}
	// timedPair times both forms in alternating rounds (each goes first
	// every other round), so that a machine whose speed drifts shifts
	// both alike.
	timedPair := func(write bool, d time.Duration) (blocking, nonblocking float64, err error) {
		tb, tn := make([]float64, rounds), make([]float64, rounds)
		for i := range rounds {
			nbFirst := i%2 == 1
			first, err := one(write, nbFirst, d)
			if err != nil {
				return 0, 0, err
			}
			second, err := one(write, !nbFirst, d)
			if err != nil {
				return 0, 0, err
			}
			if nbFirst {
				first, second = second, first
			}
			tb[i], tn[i] = first, second
		}
		return Median(tb), Median(tn), nil
	}
	// Warm-up: the file exists at full size, the read buffer's pages are
	// mapped, and what the first nonblocking calls set up is there.
	for _, write := range []bool{true, false} {
		if _, err := one(write, false, 0); err != nil {
			return nil, err
		}
		for range 4 {
			if _, err := one(write, true, 0); err != nil {
				return nil, err
			}
		}
	}
	var out []OverlapResult
	for _, write := range []bool{true, false} {
		io, err := timed(write, false, 0)
		if err != nil {
			return out, err
		}
		for _, f := range factors {
			r := OverlapResult{Op: "read", Factor: f, IO: io, Compute: f * io}
			if write {
				r.Op = "write"
			}
			d := time.Duration(r.Compute * 1e9)
			if r.Blocking, r.Nonblocking, err = timedPair(write, d); err != nil {
				return out, err
			}
			OverlapFigures(&r)
			out = append(out, r)
		}
	}
	v := []int64{bad}
	if err := c.AllreduceInt64(v, v, comm.OpSum); err != nil {
		return out, err
	}
	if v[0] > 0 {
		return out, fmt.Errorf("reads brought %d wrong values", v[0])
	}
	return out, nil
}

// Median is the median of v (sorted in place).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// PrintOverlap prints the overlap results of impl as a table.
func PrintOverlap(w io.Writer, impl string, rs []OverlapResult, busy bool) {
	how := "sleeps"
	if busy {
		how = "spins on the rank's thread"
	}
	fmt.Fprintf(w, "\noverlap of %s: compute C = factor × T_io (%s, no MPI call), then blocking vs nonblocking + wait\n", impl, how)
	fmt.Fprintf(w, "%-6s %7s %10s %10s %12s %15s %7s %9s\n", "op", "factor", "C ms", "T_io ms", "blocking ms", "nonblocking ms", "hidden", "nb_ratio")
	for _, r := range rs {
		fmt.Fprintf(w, "%-6s %7.2f %10.2f %10.2f %12.2f %15.2f %7.2f %9.2f\n", r.Op, r.Factor, r.Compute*1e3, r.IO*1e3,
			r.Blocking*1e3, r.Nonblocking*1e3, r.Hidden, r.Ratio)
	}
	fmt.Fprintf(w, "(hidden = (blocking - nonblocking) / min(C, blocking - C), the share of the I/O time hidden; nb_ratio = blocking / nonblocking,\n the nonblocking bandwidth over the blocking one; times are the slowest rank's, medians)\n")
}

// OverlapLine is one result as a key=value line, like bench/c/overlap.c's.
func OverlapLine(impl string, np int, bytes int64, r OverlapResult) string {
	return fmt.Sprintf("overlap impl=%s op=%s factor=%.2f compute_ms=%.2f io_ms=%.2f blocking_ms=%.2f nonblocking_ms=%.2f hidden=%.2f nb_ratio=%.2f np=%d B=%d",
		impl, r.Op, r.Factor, r.Compute*1e3, r.IO*1e3, r.Blocking*1e3, r.Nonblocking*1e3, r.Hidden, r.Ratio, np, bytes)
}

// OverlapFactors checks what the overlap mode of every benchmark asks of
// its flags, after the benchmark's own conflicts: -impl, when given, must
// be collio alone, and -overlap-rounds 1 to 1000. It returns the compute
// factors of -overlap.
func OverlapFactors(fs *flag.FlagSet, overlap string, impls []string, rounds int) ([]float64, error) {
	implSet := false
	fs.Visit(func(f *flag.Flag) { implSet = implSet || f.Name == "impl" })
	switch {
	case implSet && (len(impls) != 1 || impls[0] != "collio"):
		return nil, fmt.Errorf("-overlap measures collio's nonblocking calls: use -impl collio (or leave -impl out)")
	case rounds < 1 || rounds > 1000:
		return nil, fmt.Errorf("-overlap-rounds %d: want 1 to 1000", rounds)
	}
	f, err := ParseFactors(overlap)
	if err != nil {
		return nil, fmt.Errorf("-overlap: %w", err)
	}
	return f, nil
}
