//go:build cgo

package main

import (
	"fmt"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

// workload is one implementation of the benchmark's I/O calls.
type workload interface {
	open(path string, write bool) error
	setView(g [3]int, b block) error
	transfer(buf []byte, write bool) error
	sync() error
	close() error
	// info returns the effective hints of the open file (MPI_File_get_info).
	info() map[string]string
}

// op describes one measured write or read.
type op struct {
	impl, kind string
	iter       int
	write      bool
	noSync     bool               // writes skip MPI_File_sync (-sync=false)
	progress   func(phase string) // called before each write and read
}

// measure writes then reads the array through w and verifies every value.
// buf holds this rank's block; it is refilled here.
func measure(c comm.Comm, w workload, o op, path string, g [3]int, b block, total int64, buf []byte) ([]benchutil.Result, error) {
	b.fillBytes(g, buf)
	var out []benchutil.Result
	for _, write := range []bool{true, false} {
		o.write = write
		if !write {
			clear(buf)
		}
		if o.progress != nil {
			o.progress(map[bool]string{true: "write", false: "read"}[write])
		}
		r, err := measureOne(c, w, o, path, g, b, total, buf)
		if r != nil {
			out = append(out, *r)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func measureOne(c comm.Comm, w workload, o op, path string, g [3]int, b block, total int64, buf []byte) (*benchutil.Result, error) {
	r := &benchutil.Result{Impl: o.impl, Kind: o.kind, Op: "write", Iter: o.iter, Bytes: total, Verify: benchutil.VerifyByRead}
	if !o.write {
		r.Op, r.Verify = "read", benchutil.VerifyValues
	}
	var s benchutil.Sample
	c.Barrier()
	err := s.Time(benchutil.PhaseOpen, func() error { return w.open(path, o.write) })
	if err == nil {
		err = s.Time(benchutil.PhaseView, func() error { return w.setView(g, b) })
		if err == nil {
			// Every rank starts the timed transfer together, as after
			// coll_perf's and IOR's barriers: set_view leaves ranks apart
			// by up to a time slice here, which a synchronizing call
			// would otherwise be charged and an unsynchronized one not.
			c.Barrier()
			s.StartAlloc()
			err = s.Time(benchutil.PhaseXfer, func() error { return w.transfer(buf, o.write) })
			s.StopAlloc()
			s.Calls = 1
			if cw, ok := w.(*collioWorkload); ok && err == nil {
				s.CollectCollio(cw.f)
			}
			if err == nil && o.write && o.iter == 1 {
				r.Info = w.info()
			}
		}
		if err == nil && o.write && !o.noSync {
			err = s.Time(benchutil.PhaseSync, w.sync)
		}
		if cerr := s.Time(benchutil.PhaseClose, w.close); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Op, err)
	}
	if !o.write {
		bad, _ := b.verifyBytes(g, buf)
		s.Bad = int64(bad)
	}
	if err := benchutil.Reduce(c, &s, r); err != nil {
		return nil, err
	}
	if r.Bad > 0 {
		return r, fmt.Errorf("read back %d wrong values", r.Bad)
	}
	return r, nil
}

// collioWorkload runs the benchmark through collio.
type collioWorkload struct {
	comm  comm.Comm
	hints collio.Hints
	indep bool // independent calls instead of collective ones
	f     *collio.File
}

func (w *collioWorkload) open(path string, write bool) error {
	mode := collio.ModeRdOnly
	if write {
		mode = collio.ModeCreate | collio.ModeWrOnly
	}
	var err error
	w.f, err = collio.Open(w.comm, path, mode, w.hints)
	return err
}

func (w *collioWorkload) setView(g [3]int, b block) error {
	sub, err := collio.Subarray(g[:], b.size[:], b.start[:], collio.OrderC, collio.Int32)
	if err != nil {
		return err
	}
	return w.f.SetView(0, collio.Int32, sub, nil)
}

func (w *collioWorkload) transfer(buf []byte, write bool) error {
	var err error
	switch {
	case write && w.indep:
		_, err = w.f.WriteAt(buf, 0)
	case write:
		_, err = w.f.WriteAtAll(buf, 0)
	case w.indep:
		_, err = w.f.ReadAt(buf, 0)
	default:
		_, err = w.f.ReadAtAll(buf, 0)
	}
	return err
}

func (w *collioWorkload) sync() error             { return w.f.Sync() }
func (w *collioWorkload) info() map[string]string { return w.f.Info() }
func (w *collioWorkload) close() error            { return w.f.Close() }

// hostWorkload runs the benchmark through the host MPI's own MPI-IO.
type hostWorkload struct {
	comm  mpi.Comm
	hints collio.Hints
	indep bool // independent calls instead of collective ones
	f     *mpi.HostFile
	sub   mpi.Datatype
}

func (w *hostWorkload) open(path string, write bool) error {
	mode := mpi.ModeRdOnly
	if write {
		mode = mpi.ModeCreate | mpi.ModeWrOnly
	}
	var err error
	w.f, err = mpi.HostOpen(w.comm, path, mode, w.hints)
	return err
}

func (w *hostWorkload) setView(g [3]int, b block) error {
	var err error
	w.sub, err = mpi.TypeSubarray(g[:], b.size[:], b.start[:], mpi.OrderC, mpi.TypeInt())
	if err != nil {
		return err
	}
	return w.f.SetView(0, mpi.TypeInt(), w.sub, "native", nil)
}

func (w *hostWorkload) transfer(buf []byte, write bool) error {
	var err error
	switch {
	case write && w.indep:
		_, err = w.f.WriteAt(0, buf, len(buf), mpi.Byte())
	case write:
		_, err = w.f.WriteAtAll(0, buf, len(buf), mpi.Byte())
	case w.indep:
		_, err = w.f.ReadAt(0, buf, len(buf), mpi.Byte())
	default:
		_, err = w.f.ReadAtAll(0, buf, len(buf), mpi.Byte())
	}
	return err
}

func (w *hostWorkload) sync() error { return w.f.Sync() }
func (w *hostWorkload) info() map[string]string {
	m, err := w.f.Info()
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return m
}
func (w *hostWorkload) close() error {
	err := w.f.Close()
	if !w.sub.IsNull() {
		w.sub.Free()
		w.sub = mpi.Datatype{}
	}
	return err
}
