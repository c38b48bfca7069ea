//go:build cgo

package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
)

// report is the JSON document (-json): collperf's schema, the results
// and implementations tagged with their pattern (workload).
type report struct {
	Workload string               `json:"workload"` // the pattern, or "patterns" for several
	Case     string               `json:"case,omitempty"`
	Label    string               `json:"label,omitempty"`
	Time     string               `json:"time"`
	Host     string               `json:"host"`
	Command  []string             `json:"command"`
	NP       int                  `json:"np"`
	Bytes    int64                `json:"bytes"` // of the first pattern; each result has its own
	Dir      string               `json:"dir"`
	FS       string               `json:"fs"`
	Hints    map[string]string    `json:"hints"`
	HintFrom map[string]string    `json:"hint_sources,omitempty"`
	Iters    int                  `json:"iters"`
	Patterns []patternInfo        `json:"patterns"`
	Impls    []benchutil.ImplInfo `json:"impls"`
	Results  []benchutil.Result   `json:"results"`
	Errors   []string             `json:"errors,omitempty"`
}

type patternInfo struct {
	Name   string         `json:"name"`
	Case   string         `json:"case"`
	Bytes  int64          `json:"bytes"`
	Calls  int            `json:"calls"`
	Params map[string]any `json:"params"`
}

type bench struct {
	cfg   config
	world comm.Comm
	prog  *benchutil.Progress
	done  int64 // calls done, for progress
	total int64
}

func run(cfg config) int {
	collio.ShareCores() // one Go processor per core of the node, not per rank
	world, err := collio.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, "patterns:", err)
		return 1
	}
	defer collio.Finalize()
	rank, np := world.Rank(), world.Size()
	rep := report{Label: cfg.label, Time: time.Now().Format(time.RFC3339), Command: os.Args, NP: np, Dir: cfg.dir,
		FS: benchutil.FSType(cfg.dir), Hints: cfg.hints, HintFrom: cfg.hintSrc, Iters: cfg.iters}
	rep.Host, _ = os.Hostname()
	if abs, err := filepath.Abs(cfg.dir); err == nil {
		rep.Dir = abs
	}
	rep.Workload = "patterns"
	if len(cfg.patterns) == 1 {
		rep.Workload = cfg.patterns[0]
	}
	if cfg.jsonPath != "" {
		var bad int64
		if rank == 0 {
			if err := os.WriteFile(cfg.jsonPath, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "patterns: -json:", err)
				bad = 1
			}
		}
		v := []int64{bad}
		if err := world.AllreduceInt64(v, v, comm.OpMax); err != nil || v[0] != 0 {
			return 2
		}
	}
	b := &bench{cfg: cfg, world: world, prog: benchutil.NewProgress("patterns", rank == 0 && !cfg.quiet)}
	var pats []pattern
	for _, name := range cfg.patterns {
		p, err := newPattern(name, rank, np, cfg.sizes)
		if err != nil {
			if rank == 0 {
				fmt.Fprintln(os.Stderr, "patterns:", err)
			}
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		pats = append(pats, p)
		b.total += 2 * int64(p.calls()) * int64(cfg.iters) * int64(len(cfg.impls))
		rep.Patterns = append(rep.Patterns, patternInfo{Name: name, Case: p.caseText(), Bytes: p.bytes(), Calls: p.calls(), Params: p.params()})
	}
	if len(rep.Patterns) > 0 {
		rep.Bytes = rep.Patterns[0].Bytes
		if len(rep.Patterns) == 1 {
			rep.Case = rep.Patterns[0].Case
		}
	}
	if rank == 0 && !cfg.quiet {
		fmt.Printf("patterns: %d ranks, %d repetition(s), dir %s (%s)\n", np, cfg.iters, rep.Dir, rep.FS)
		if len(cfg.hints) > 0 {
			fmt.Printf("patterns: hints %s\n", benchutil.FormatHints(cfg.hints))
		}
	}
	failed := len(rep.Errors) > 0
	for _, p := range pats {
		var results []benchutil.Result
		var impls []benchutil.ImplInfo
		buf := make([]byte, 8*p.bufLen())
		for _, kind := range cfg.impls {
			info := benchutil.ImplInfo{Impl: cfg.name, Kind: kind, Workload: p.name()}
			path := filepath.Join(cfg.dir, "patterns."+p.name()+"."+kind)
			if kind == "collio" && cfg.driver != "" {
				path = cfg.driver + ":" + path
			} else if kind == "mpiio" {
				info.Impl = benchutil.HostLabel(os.Getenv)
				info.MCA = benchutil.HostMCA(os.Getenv)
			}
			reset := benchutil.ResetPeakRSS()
			for it := 1; it <= cfg.iters; it++ {
				rs, err := b.repetition(p, kind, info.Impl, path, it, buf)
				for _, r := range rs {
					if r.Info != nil && info.EffectiveHints == nil {
						info.EffectiveHints = r.Info
					}
				}
				results = append(results, rs...)
				if err != nil {
					msg := fmt.Sprintf("%s %s: %v", p.name(), info.Impl, err)
					if rank == 0 {
						b.prog.Done()
						fmt.Fprintln(os.Stderr, "patterns:", msg)
					}
					rep.Errors = append(rep.Errors, msg)
					failed = true
					break
				}
			}
			if info.PeakRSSMax, info.PeakRSSMin, info.RSSReset, err = benchutil.PeakRSSOver(world, reset); err != nil {
				fmt.Fprintln(os.Stderr, "patterns:", err)
				return 1
			}
			impls = append(impls, info)
			if !cfg.keep && rank == 0 {
				if kind == "collio" {
					collio.Delete(path)
				} else {
					os.Remove(path)
				}
			}
		}
		rep.Results = append(rep.Results, results...)
		rep.Impls = append(rep.Impls, impls...)
		if rank == 0 && !cfg.quiet {
			b.prog.Done()
			fmt.Printf("\n== %s: %s, %s per write\n", p.name(), p.caseText(), benchutil.FormatBytes(p.bytes()))
			benchutil.PrintTable(os.Stdout, results)
			benchutil.PrintBreakdown(os.Stdout, results)
			benchutil.PrintMemory(os.Stdout, impls, results)
		}
	}
	if rank == 0 && cfg.jsonPath != "" {
		if err := benchutil.WriteJSON(cfg.jsonPath, rep); err != nil {
			fmt.Fprintln(os.Stderr, "patterns:", err)
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

// repetition writes the pattern's file, then reads it back and verifies.
func (b *bench) repetition(p pattern, kind, label, path string, iter int, buf []byte) ([]benchutil.Result, error) {
	var out []benchutil.Result
	for _, write := range []bool{true, false} {
		r, err := b.pass(p, kind, label, path, iter, write, buf)
		if err != nil {
			return out, fmt.Errorf("%s: %w", r.Op, err)
		}
		out = append(out, r)
		if r.Bad > 0 {
			return out, fmt.Errorf("read back %d wrong values", r.Bad)
		}
	}
	return out, nil
}

func setWord(buf []byte, i int, v uint64) { binary.LittleEndian.PutUint64(buf[8*i:], v) }
func getWord(buf []byte, i int) uint64    { return binary.LittleEndian.Uint64(buf[8*i:]) }

// pass is one timed write or read of the whole pattern. Types are built
// in the view phase; values are filled before and checked after each
// call, outside the timed calls.
func (b *bench) pass(p pattern, kind, label, path string, iter int, write bool, buf []byte) (benchutil.Result, error) {
	r := benchutil.Result{Impl: label, Kind: kind, Workload: p.name(), Case: p.caseText(), Op: "write", Iter: iter,
		Bytes: p.bytes(), Verify: benchutil.VerifyByRead}
	if !write {
		r.Op, r.Verify = "read", benchutil.VerifyValues
	}
	phase := fmt.Sprintf("%s %s %s rep %d/%d", p.name(), label, r.Op, iter, b.cfg.iters)
	for i := range len(buf) / 8 {
		setWord(buf, i, sentinel)
	}
	var s benchutil.Sample
	var f *benchutil.File
	types := benchutil.Types{Host: kind == "mpiio"}
	defer types.Free()
	b.world.Barrier()
	err := s.Time(benchutil.PhaseOpen, func() error {
		var err error
		f, err = benchutil.OpenFile(kind, b.world, path, write, b.cfg.hints)
		return err
	})
	if err != nil {
		return r, err
	}
	var calls []call
	err = s.Time(benchutil.PhaseView, func() error {
		var v view
		var err error
		if v, calls, err = p.plan(&types); err != nil {
			return err
		}
		return f.SetView(v.disp, v.etype, v.filetype)
	})
	if err == nil {
		b.world.Barrier() // the timed calls start together (see collperf)
		s.StartAlloc()
		for k, c := range calls {
			if write {
				p.each(k, func(mem int, file int64) { setWord(buf, mem, value(file, iter)) })
			}
			a := benchutil.Access{Buf: buf, Mem: c.mem, Count: c.count, Size: c.size}
			start := time.Now()
			if write {
				err = f.Write(a, c.off, true)
			} else {
				err = f.Read(a, c.off, true)
			}
			s.Phase[benchutil.PhaseXfer] += time.Since(start)
			s.Calls++
			if err != nil {
				break
			}
			if !write {
				p.each(k, func(mem int, file int64) {
					if getWord(buf, mem) != value(file, iter) {
						s.Bad++
					}
					setWord(buf, mem, sentinel)
				})
			}
			b.done++
			b.prog.Update(phase, b.done, b.total)
		}
		s.StopAlloc()
		f.Collect(&s)
		if err == nil && write && iter == 1 {
			r.Info = f.Info()
		}
	}
	if err == nil && !write {
		// A read must not touch guard cells or gaps: everything it
		// should have filled was reset above.
		for i := range len(buf) / 8 {
			if getWord(buf, i) != sentinel {
				s.Bad++
			}
		}
	}
	if err == nil && write {
		err = s.Time(benchutil.PhaseSync, f.Sync)
	}
	if cerr := s.Time(benchutil.PhaseClose, f.Close); err == nil {
		err = cerr
	}
	if err := benchutil.Agree(b.world, err); err != nil {
		return r, err
	}
	if err := benchutil.Reduce(b.world, &s, &r); err != nil {
		return r, err
	}
	return r, nil
}
