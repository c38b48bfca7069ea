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

// report is the JSON document (-json), in collperf's schema plus the IOR
// parameters.
type report struct {
	Workload string                    `json:"workload"`
	Case     string                    `json:"case"`
	Label    string                    `json:"label,omitempty"`
	Time     string                    `json:"time"`
	Host     string                    `json:"host"`
	Command  []string                  `json:"command"`
	NP       int                       `json:"np"`
	Bytes    int64                     `json:"bytes"` // aggregate bytes of one write or read
	Dir      string                    `json:"dir"`
	FS       string                    `json:"fs"`
	Hints    map[string]string         `json:"hints"`
	HintFrom map[string]string         `json:"hint_sources,omitempty"`
	Iters    int                       `json:"iters"`
	IOR      iorParams                 `json:"ior"`
	Impls    []benchutil.ImplInfo      `json:"impls"`
	Results  []benchutil.Result        `json:"results"`
	Overlap  []benchutil.OverlapResult `json:"overlap,omitempty"` // -overlap
	Errors   []string                  `json:"errors,omitempty"`
}

type iorParams struct {
	Block         int64  `json:"block_bytes"`
	Xfer          int64  `json:"transfer_bytes"`
	Segments      int    `json:"segments"`
	FilePerProc   bool   `json:"file_per_proc"`
	Collective    bool   `json:"collective"`
	UseView       bool   `json:"file_view"`
	Write         bool   `json:"write"`
	Read          bool   `json:"read"`
	CheckWrite    bool   `json:"check_write"`
	CheckRead     bool   `json:"check_read"`
	Fsync         bool   `json:"fsync"`
	Reorder       bool   `json:"reorder_tasks"`
	ReorderOffset int    `json:"task_offset"`
	Path          string `json:"path"`
}

// layout is the IOR file layout: where rank r's transfer k of segment s
// lives, which file holds it, and what the view shows.
type layout struct {
	block, xfer   int64
	segments, np  int
	filePerProc   bool
	useView       bool
	transfersPerB int64
}

func newLayout(c config, np int) layout {
	return layout{block: c.block, xfer: c.xfer, segments: c.segments, np: np, filePerProc: c.filePerProc,
		useView: c.useView, transfersPerB: c.block / c.xfer}
}

// calls is the number of transfer calls per rank.
func (l layout) calls() int64 { return int64(l.segments) * l.transfersPerB }

// fileOffset is the byte offset in the file of call i (segment-major) of
// rank r (the rank whose data it is).
func (l layout) fileOffset(r int, i int64) int64 {
	s, k := i/l.transfersPerB, i%l.transfersPerB
	if l.filePerProc {
		return s*l.block + k*l.xfer
	}
	return (s*int64(l.np)+int64(r))*l.block + k*l.xfer
}

// callOffset is the offset passed to the call: the file offset, or with a
// view the offset within the rank's blocks.
func (l layout) callOffset(r int, i int64) int64 {
	if l.useView {
		return i * l.xfer
	}
	return l.fileOffset(r, i)
}

// fileIndex is the file a rank's data live in for the pattern: the rank
// with -F, 0 for a shared file.
func (l layout) fileIndex(r int) int {
	if l.filePerProc {
		return r
	}
	return 0
}

// patternKey is the per-file, per-repetition part of the data pattern.
func patternKey(file, iter int) uint64 {
	z := uint64(iter)<<32 | uint64(uint32(file))
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// word is the value of the 8-byte word at byte offset off of a file.
func word(off int64, key uint64) uint64 { return (uint64(off)|1)*0x9e3779b97f4a7c15 ^ key }

// fill writes the pattern of the bytes at file offset off into buf.
func fill(buf []byte, off int64, key uint64) {
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], word(off+int64(i), key))
	}
}

// verify counts the words of buf that differ from the pattern at off.
func verify(buf []byte, off int64, key uint64) int64 {
	var bad int64
	for i := 0; i+8 <= len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:]) != word(off+int64(i), key) {
			bad++
		}
	}
	return bad
}

// kind of a measured pass over the file.
type kind int

const (
	kindWrite kind = iota
	kindRead
	kindCheck // -W: read back after the write, verified, not timed for bandwidth
)

type bench struct {
	cfg    config
	world  comm.Comm
	self   comm.Comm // -F: a one-rank communicator
	rank   int
	np     int
	lay    layout
	buf    []byte
	prog   *benchutil.Progress
	passes int64 // passes of the whole run, for progress
	done   int64 // transfer calls done, for progress
}

func run(cfg config) int {
	collio.ShareCores() // one Go processor per core of the node, not per rank
	world, err := collio.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, "iorbench:", err)
		return 1
	}
	defer collio.Finalize()
	b := &bench{cfg: cfg, world: world, rank: world.Rank(), np: world.Size(), buf: make([]byte, cfg.xfer)}
	b.lay = newLayout(cfg, b.np)
	if cfg.filePerProc {
		if b.self, err = world.Split(b.rank, 0); err != nil {
			fmt.Fprintln(os.Stderr, "iorbench:", err)
			return 1
		}
		defer b.self.Free()
	}
	agg := int64(b.np) * int64(cfg.segments) * cfg.block
	dir := filepath.Dir(cfg.path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	rep := report{
		Workload: cfg.workload, Case: cfg.caseText(), Label: cfg.label, Time: time.Now().Format(time.RFC3339),
		Command: os.Args, NP: b.np, Bytes: agg, Dir: dir, FS: benchutil.FSType(dir),
		Hints: cfg.hints, HintFrom: cfg.hintSrc, Iters: cfg.iters,
		IOR: iorParams{Block: cfg.block, Xfer: cfg.xfer, Segments: cfg.segments, FilePerProc: cfg.filePerProc,
			Collective: cfg.collective, UseView: cfg.useView, Write: cfg.write, Read: cfg.read, CheckWrite: cfg.checkWrite,
			CheckRead: cfg.checkRead, Fsync: cfg.fsync, Reorder: cfg.reorder, ReorderOffset: cfg.reorderOffset, Path: cfg.path},
	}
	rep.Host, _ = os.Hostname()
	if cfg.jsonPath != "" {
		var bad int64
		if b.rank == 0 {
			if err := os.WriteFile(cfg.jsonPath, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "iorbench: -json:", err)
				bad = 1
			}
		}
		v := []int64{bad}
		if err := world.AllreduceInt64(v, v, comm.OpMax); err != nil || v[0] != 0 {
			return 2
		}
	}
	if b.rank == 0 && !cfg.quiet {
		printHeader(os.Stdout, cfg, b.np, rep.FS)
	}
	if cfg.overlap != nil {
		return b.runOverlap(&rep)
	}
	b.prog = benchutil.NewProgress("iorbench", b.rank == 0 && !cfg.quiet)
	perRep := int64(0)
	for _, on := range []bool{cfg.write, cfg.checkWrite, cfg.read} {
		if on {
			perRep++
		}
	}
	b.passes = perRep * int64(cfg.iters) * int64(len(cfg.impls))

	failed := false
	for _, impl := range cfg.impls {
		info := benchutil.ImplInfo{Impl: cfg.name, Kind: impl, Workload: cfg.workload}
		if impl == "mpiio" {
			info.Impl = benchutil.HostLabel(os.Getenv)
			info.MCA = benchutil.HostMCA(os.Getenv)
		}
		reset := benchutil.ResetPeakRSS()
		for it := 1; it <= cfg.iters; it++ {
			if it > 1 && cfg.delay > 0 {
				// IOR's -d: the compute phase between repetitions, where the
				// E10 cache's copies of the last write can hide.
				benchutil.Compute(cfg.delay, cfg.busy)
			}
			rs, err := b.repetition(impl, info.Impl, it, &info)
			rep.Results = append(rep.Results, rs...)
			if b.rank == 0 && !cfg.quiet {
				b.prog.Done()
				for _, r := range rs {
					printLine(os.Stdout, r, cfg, it)
				}
			}
			if err != nil {
				msg := fmt.Sprintf("%s: %v", info.Impl, err)
				if b.rank == 0 {
					b.prog.Done()
					fmt.Fprintln(os.Stderr, "iorbench:", msg)
				}
				rep.Errors = append(rep.Errors, msg)
				failed = true
				break
			}
		}
		if info.PeakRSSMax, info.PeakRSSMin, info.RSSReset, err = benchutil.PeakRSSOver(world, reset); err != nil {
			fmt.Fprintln(os.Stderr, "iorbench:", err)
			return 1
		}
		rep.Impls = append(rep.Impls, info)
	}
	b.prog.Done()
	if b.rank == 0 {
		if !cfg.quiet {
			printSummary(os.Stdout, rep.Results, cfg, b.np)
			benchutil.PrintBreakdown(os.Stdout, rep.Results)
			benchutil.PrintMemory(os.Stdout, rep.Impls, rep.Results)
		}
		if cfg.jsonPath != "" {
			if err := benchutil.WriteJSON(cfg.jsonPath, rep); err != nil {
				fmt.Fprintln(os.Stderr, "iorbench:", err)
				failed = true
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}

// repetition runs one IOR iteration: write (and its check), then read,
// then removes the file unless -k.
func (b *bench) repetition(impl, label string, iter int, info *benchutil.ImplInfo) ([]benchutil.Result, error) {
	cfg := b.cfg
	var out []benchutil.Result
	if cfg.write {
		w, err := b.pass(impl, label, iter, kindWrite)
		if err != nil {
			return out, fmt.Errorf("write: %w", err)
		}
		if w.Info != nil && info.EffectiveHints == nil {
			info.EffectiveHints = w.Info
		}
		switch {
		case cfg.checkWrite:
			chk, err := b.pass(impl, label, iter, kindCheck)
			if err != nil {
				return append(out, w), fmt.Errorf("check write: %w", err)
			}
			w.Bad, w.Verify = chk.Bad, benchutil.VerifyReadBack
		case cfg.read && cfg.checkRead:
			w.Verify = benchutil.VerifyByRead
		default:
			w.Verify = benchutil.VerifyNone
		}
		out = append(out, w)
		if w.Bad > 0 {
			return out, fmt.Errorf("check write: %d wrong 8-byte words", w.Bad)
		}
	}
	if cfg.read {
		r, err := b.pass(impl, label, iter, kindRead)
		if err != nil {
			return out, fmt.Errorf("read: %w", err)
		}
		out = append(out, r)
		if r.Bad > 0 {
			return out, fmt.Errorf("read: %d wrong 8-byte words", r.Bad)
		}
	}
	if cfg.write && !cfg.keep {
		b.world.Barrier()
		b.remove(impl)
	}
	return out, nil
}

// path is the file holding rank r's data for impl.
func (b *bench) path(impl string, r int) string {
	p := b.cfg.path
	if b.cfg.filePerProc {
		p = fmt.Sprintf("%s.%08d", p, r)
	}
	if impl == "collio" && b.cfg.driver != "" {
		p = b.cfg.driver + ":" + p
	}
	return p
}

func (b *bench) remove(impl string) {
	if !b.cfg.filePerProc && b.rank != 0 {
		return
	}
	p := b.path(impl, b.rank)
	if impl == "collio" {
		collio.Delete(p)
	} else {
		os.Remove(p)
	}
}

// pass is one timed write or read of every transfer (or the -W check).
func (b *bench) pass(impl, label string, iter int, k kind) (benchutil.Result, error) {
	cfg := b.cfg
	write := k == kindWrite
	target := b.rank
	if !write && cfg.reorder {
		target = (b.rank + cfg.reorderOffset) % b.np
	}
	dataIter := iter
	if !cfg.write {
		dataIter = 1 // reading a file left by an earlier run (-k)
	}
	key := patternKey(b.lay.fileIndex(target), dataIter)
	c := b.world
	if cfg.filePerProc {
		c = b.self
	}
	opName := map[kind]string{kindWrite: "write", kindRead: "read", kindCheck: "check"}[k]
	r := benchutil.Result{Impl: label, Kind: impl, Workload: cfg.workload, Case: cfg.caseText(), Op: opName, Iter: iter,
		Bytes: int64(b.np) * int64(cfg.segments) * cfg.block}
	if k == kindRead {
		r.Verify = benchutil.VerifyNone
		if cfg.checkRead {
			r.Verify = benchutil.VerifyValues
		}
	}
	phase := fmt.Sprintf("%s %s rep %d/%d", label, opName, iter, cfg.iters)
	var s benchutil.Sample
	var f *benchutil.File
	b.world.Barrier()
	err := s.Time(benchutil.PhaseOpen, func() error {
		var err error
		f, err = benchutil.OpenFile(impl, c, b.path(impl, target), write, cfg.hints)
		return err
	})
	if err != nil {
		return r, err
	}
	var types benchutil.Types
	types.Host = impl == "mpiio"
	defer types.Free()
	if cfg.useView {
		err = s.Time(benchutil.PhaseView, func() error {
			blk, err := types.Contiguous(int(cfg.block), types.Byte())
			if err == nil {
				blk, err = types.Resized(blk, 0, int64(b.np)*cfg.block)
			}
			if err == nil {
				err = f.SetView(int64(target)*cfg.block, types.Byte(), blk)
			}
			return err
		})
	}
	n := b.lay.calls()
	verifyNow := k == kindCheck || (k == kindRead && cfg.checkRead)
	if err == nil {
		b.world.Barrier() // the timed calls start together (see collperf)
		s.StartAlloc()
		for i := int64(0); i < n && err == nil; i++ {
			off := b.lay.fileOffset(target, i)
			if write {
				fill(b.buf, off, key)
			} else if verifyNow {
				clear(b.buf)
			}
			a := benchutil.Bytes(b.buf)
			callOff := b.lay.callOffset(target, i)
			start := time.Now()
			if write {
				err = f.Write(a, callOff, cfg.collective)
			} else {
				err = f.Read(a, callOff, cfg.collective)
			}
			s.Phase[benchutil.PhaseXfer] += time.Since(start)
			s.Calls++
			if err == nil && verifyNow {
				s.Bad += verify(b.buf, off, key)
			}
			b.done++
			if k != kindCheck {
				b.prog.Update(phase, b.done, b.passes*n)
			}
		}
		s.StopAlloc()
		f.Collect(&s)
		if err == nil && write && iter == 1 {
			r.Info = f.Info()
		}
	}
	if err == nil && write && cfg.fsync {
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
