//go:build cgo

package main

// Write phases with compute in between (-phases N -compute D): the E10
// paper's workflow. Each phase opens the file, writes the array, closes
// it; then the application computes while the node-local cache (if any)
// copies to the global file in the background. The next open of the file
// waits for that copy (e10_cache_deferred_close) or close did
// (otherwise). What the application perceives is the write phases plus
// those waits; the paper's model predicts it from the cache write time
// Tc, the sync time Ts and the compute time C:
//
//	bw = ΣS / Σ (Tc(k) + max(0, Ts(k) − C(k+1)))
//
// with no compute after the last phase, whose sync is never hidden.

import (
	"fmt"
	"io"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
)

// phaseTimes is one write phase, in seconds, each the slowest rank's.
type phaseTimes struct {
	Iter    int     `json:"iter"`
	Write   float64 `json:"write_s"`   // Tc: open, view, write_all, sync (if any) and close
	Sync    float64 `json:"sync_s"`    // Ts: the copy to the global file after close (cache only)
	Compute float64 `json:"compute_s"` // C: compute after this phase (0 after the last)
	Wait    float64 `json:"wait_s"`    // what the application waited for that copy after computing
}

// phaseRun is one implementation's phases and the bandwidths they give.
type phaseRun struct {
	Impl      string       `json:"impl"`
	Compute   float64      `json:"compute_s"` // -compute: the compute asked for between phases
	Bytes     int64        `json:"bytes_per_phase"`
	Phases    []phaseTimes `json:"phases"`
	Perceived float64      `json:"perceived_mib_s"` // ΣS / Σ(write + wait)
	Model     float64      `json:"model_mib_s"`     // ΣS / Σ(Tc + max(0, Ts − C))
	Hidden    float64      `json:"hidden_mib_s"`    // ΣS / ΣTc: every sync hidden (the paper's TBW)
}

// finish computes the bandwidths of r from its phases.
func (r *phaseRun) finish() {
	var perceived, model, tc float64
	for _, p := range r.Phases {
		perceived += p.Write + p.Wait
		model += p.Write + max(0, p.Sync-p.Compute)
		tc += p.Write
	}
	total := r.Bytes * int64(len(r.Phases))
	r.Perceived = benchutil.MiBs(total, perceived)
	r.Model = benchutil.MiBs(total, model)
	r.Hidden = benchutil.MiBs(total, tc)
}

// copyClock measures the copies of deferred closes.
type copyClock struct{ closeWait time.Duration }

// wait waits for this process's deferred closes of path and returns how
// long it waited and how long the copies took since the last call
// (cache.Totals' CloseWait: from close to the copy done, in the
// background for a deferred close).
func (cc *copyClock) wait(path string, isCollio bool) (waited, copied time.Duration, err error) {
	if !isCollio {
		return 0, 0, nil
	}
	start := time.Now()
	err = collio.WaitClosed(path)
	waited = time.Since(start)
	now := cache.Totals().CloseWait
	copied, cc.closeWait = now-cc.closeWait, now
	return waited, copied, err
}

// runPhases runs cfg.phases write phases through w, then reads the file
// back once and verifies it.
func runPhases(c comm.Comm, cfg config, computeFor time.Duration, w workload, o op, path string, blk block, total int64, buf []byte) (*phaseRun, []benchutil.Result, error) {
	isCollio := o.kind == "collio"
	run := &phaseRun{Impl: o.impl, Bytes: total, Compute: computeFor.Seconds()}
	var results []benchutil.Result
	var clock copyClock
	deferred := false
	if _, _, err := clock.wait(path, isCollio); err != nil { // an earlier run's copies
		return nil, nil, err
	}
	blk.fillBytes(cfg.size, buf)
	for k := 1; k <= cfg.phases; k++ {
		o.iter, o.write = k, true
		if o.progress != nil {
			o.progress("write phase")
		}
		r, err := measureOne(c, w, o, path, cfg.size, blk, total, buf)
		if err != nil {
			return nil, results, err
		}
		results = append(results, *r)
		p := phaseTimes{Iter: k, Write: r.Total}
		if k == 1 {
			// Without a deferred close, close itself waited for the copy:
			// it is part of Tc, and nothing is left for Ts.
			deferred = isCollio && r.Info["e10_cache"] != "disable" && r.Info["e10_cache_deferred_close"] == "enable"
		}
		var cd time.Duration
		if k < cfg.phases {
			start := time.Now()
			benchutil.Compute(computeFor, cfg.busy)
			cd = time.Since(start)
		}
		waited, copied, err := clock.wait(path, isCollio)
		if err = benchutil.Agree(c, err); err != nil {
			return nil, results, fmt.Errorf("phase %d: the copy to the global file: %w", k, err)
		}
		v := []int64{int64(cd), int64(waited), int64(copied)}
		if err := c.AllreduceInt64(v, v, comm.OpMax); err != nil {
			return nil, results, err
		}
		p.Compute, p.Wait = secs(v[0]), secs(v[1])
		if deferred {
			p.Sync = secs(v[2])
		}
		run.Phases = append(run.Phases, p)
	}
	run.finish()
	clear(buf)
	o.iter, o.write = cfg.phases, false
	r, err := measureOne(c, w, o, path, cfg.size, blk, total, buf)
	if r != nil {
		results = append(results, *r)
	}
	return run, results, err
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// printPhases prints each implementation's phases and bandwidths.
func printPhases(out io.Writer, runs []*phaseRun) {
	fmt.Fprintf(out, "\nwrite phases with compute in between (seconds, slowest rank's; Ts = the copy after close, cache only)\n")
	fmt.Fprintf(out, "%-22s %9s %5s %8s %8s %8s %8s\n", "impl", "compute", "phase", "Tc", "Ts", "C", "waited")
	for _, r := range runs {
		for _, p := range r.Phases {
			fmt.Fprintf(out, "%-22s %9.3f %5d %8.3f %8.3f %8.3f %8.3f\n", r.Impl, r.Compute, p.Iter, p.Write, p.Sync, p.Compute, p.Wait)
		}
	}
	fmt.Fprintf(out, "\n%-22s %9s %16s %12s %17s\n", "impl", "compute", "perceived MiB/s", "model MiB/s", "all hidden MiB/s")
	for _, r := range runs {
		fmt.Fprintf(out, "%-22s %9.3f %16.1f %12.1f %17.1f\n", r.Impl, r.Compute, r.Perceived, r.Model, r.Hidden)
	}
	fmt.Fprintf(out, "(perceived = bytes written / (write phases + waits for copies); model = bytes / Σ(Tc + max(0, Ts − C)), Congiu et al.'s\n E10 model; all hidden = bytes / ΣTc)\n")
}
