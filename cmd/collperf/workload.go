package main

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/collio/collio"
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
}

// phases, in the order they run and are printed.
var phaseNames = []string{"open", "view", "xfer", "sync", "close"}

type result struct {
	Impl     string             `json:"impl"`
	Op       string             `json:"op"`
	Bytes    int64              `json:"bytes"`
	Seconds  map[string]float64 `json:"seconds"` // slowest rank per phase
	Total    float64            `json:"total_seconds"`
	XferMiBs float64            `json:"xfer_mib_s"`  // bytes / slowest transfer
	TotalMiB float64            `json:"total_mib_s"` // bytes / open-to-close
	Bad      int64              `json:"bad_values"`  // read values that differ
}

// measure writes then reads the array through w and verifies every value.
func measure(c comm.Comm, w workload, path string, g [3]int, b block, total int64) ([]result, error) {
	name := "collio"
	if _, ok := w.(*hostWorkload); ok {
		name = "mpiio"
	}
	vals := make([]int32, b.elements())
	b.fill(g, vals)
	buf := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
	}
	var out []result
	for _, write := range []bool{true, false} {
		op := "write"
		if !write {
			op = "read"
			clear(buf)
		}
		local := make([]int64, len(phaseNames))
		step := func(i int, f func() error) error {
			start := time.Now()
			err := f()
			local[i] = int64(time.Since(start))
			return err
		}
		c.Barrier()
		err := step(0, func() error { return w.open(path, write) })
		if err == nil {
			err = step(1, func() error { return w.setView(g, b) })
			if err == nil {
				err = step(2, func() error { return w.transfer(buf, write) })
			}
			if err == nil && write {
				err = step(3, w.sync)
			}
			if cerr := step(4, w.close); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", op, err)
		}
		maxNs := make([]int64, len(local))
		if err := c.AllreduceInt64(local, maxNs, comm.OpMax); err != nil {
			return out, err
		}
		var bad int64
		if !write {
			for i := range vals {
				vals[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
			}
			n, _ := b.verify(g, vals)
			b.fill(g, vals)
			sum := make([]int64, 1)
			if err := c.AllreduceInt64([]int64{int64(n)}, sum, comm.OpSum); err != nil {
				return out, err
			}
			bad = sum[0]
		}
		r := result{Impl: name, Op: op, Bytes: total, Seconds: map[string]float64{}, Bad: bad}
		for i, p := range phaseNames {
			s := float64(maxNs[i]) / 1e9
			r.Seconds[p] = s
			r.Total += s
		}
		r.XferMiBs = mibs(total, r.Seconds["xfer"])
		r.TotalMiB = mibs(total, r.Total)
		out = append(out, r)
		if bad > 0 {
			return out, fmt.Errorf("read back %d wrong values", bad)
		}
	}
	return out, nil
}

func mibs(bytes int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(bytes) / (1 << 20) / s
}

// collioWorkload runs the benchmark through collio.
type collioWorkload struct {
	comm  comm.Comm
	hints collio.Hints
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
	if write {
		_, err := w.f.WriteAtAll(buf, 0)
		return err
	}
	_, err := w.f.ReadAtAll(buf, 0)
	return err
}

func (w *collioWorkload) sync() error  { return w.f.Sync() }
func (w *collioWorkload) close() error { return w.f.Close() }

// hostWorkload runs the benchmark through the host MPI's own MPI-IO.
type hostWorkload struct {
	comm  mpi.Comm
	hints collio.Hints
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
	if write {
		_, err = w.f.WriteAtAll(0, buf, len(buf), mpi.Byte())
	} else {
		_, err = w.f.ReadAtAll(0, buf, len(buf), mpi.Byte())
	}
	return err
}

func (w *hostWorkload) sync() error { return w.f.Sync() }
func (w *hostWorkload) close() error {
	err := w.f.Close()
	if !w.sub.IsNull() {
		w.sub.Free()
		w.sub = mpi.Datatype{}
	}
	return err
}
