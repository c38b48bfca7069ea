package main

import (
	"fmt"
	"runtime"
	"slices"
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
	// info returns the effective hints of the open file (MPI_File_get_info).
	info() map[string]string
}

// phases, in the order they run and are printed.
var phaseNames = []string{"open", "view", "xfer", "sync", "close"}

type result struct {
	Impl     string             `json:"impl"` // collio, or mpiio:<io>/<fcoll> for the host MPI-IO
	Kind     string             `json:"kind"` // collio or mpiio
	Op       string             `json:"op"`   // write or read
	Iter     int                `json:"iter"` // repetition, from 1
	Bytes    int64              `json:"bytes"`
	Seconds  map[string]float64 `json:"seconds"` // slowest rank per phase
	Total    float64            `json:"total_seconds"`
	XferMiBs float64            `json:"xfer_mib_s"`  // bytes / slowest transfer
	TotalMiB float64            `json:"total_mib_s"` // bytes / open-to-close
	Bad      int64              `json:"bad_values"`  // read values that differ
	Alloc    allocStats         `json:"alloc"`
	Collio   *breakdown         `json:"collio,omitempty"` // collio runs only

	info map[string]string // effective hints, on the first write only
}

// allocStats is the Go heap allocated during the transfer call
// (runtime.MemStats.TotalAlloc after minus before), the maximum over
// ranks. The host MPI-IO allocates in C, which Go does not see, and does
// not say which ranks aggregate: its aggregator fields are -1.
type allocStats struct {
	Max             int64 `json:"max_bytes"`                // over all ranks
	AggregatorMax   int64 `json:"aggregator_max_bytes"`     // over collio's aggregators; -1 unknown
	OtherMax        int64 `json:"non_aggregator_max_bytes"` // over the other ranks; -1 unknown or none
	AggregatorRanks []int `json:"aggregator_ranks,omitempty"`
}

// breakdown is collio's own account of one collective call (collio.Stats):
// durations are the slowest rank's, messages and bytes the sums over ranks,
// the rest rank 0's.
type breakdown struct {
	Strategy    string  `json:"strategy"`
	Reason      string  `json:"reason"`
	Rounds      int     `json:"rounds"`
	Aggregators int     `json:"aggregators"`
	Plan        float64 `json:"plan_s"`
	Exchange    float64 `json:"req_exchange_s"`
	Shuffle     float64 `json:"shuffle_s"`
	IO          float64 `json:"io_s"`
	RMW         float64 `json:"rmw_s"`
	Total       float64 `json:"total_s"`
	MsgsSent    int64   `json:"msgs_sent"`
	MsgsRecv    int64   `json:"msgs_recv"`
	BytesSent   int64   `json:"bytes_sent"`
	BytesRecv   int64   `json:"bytes_recv"`
}

// op describes one measured write or read.
type op struct {
	impl, kind string
	iter       int
	write      bool
}

// measure writes then reads the array through w and verifies every value.
// buf holds this rank's block; it is refilled here.
func measure(c comm.Comm, w workload, o op, path string, g [3]int, b block, total int64, buf []byte) ([]result, error) {
	b.fillBytes(g, buf)
	var out []result
	for _, write := range []bool{true, false} {
		o.write = write
		if !write {
			clear(buf)
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

func measureOne(c comm.Comm, w workload, o op, path string, g [3]int, b block, total int64, buf []byte) (*result, error) {
	opName := "write"
	if !o.write {
		opName = "read"
	}
	local := make([]int64, len(phaseNames))
	step := func(i int, f func() error) error {
		start := time.Now()
		err := f()
		local[i] = int64(time.Since(start))
		return err
	}
	var alloc int64
	var st collio.Stats
	var aggs []int
	var m0, m1 runtime.MemStats
	var info map[string]string
	c.Barrier()
	err := step(0, func() error { return w.open(path, o.write) })
	if err == nil {
		err = step(1, func() error { return w.setView(g, b) })
		if err == nil {
			runtime.ReadMemStats(&m0)
			err = step(2, func() error { return w.transfer(buf, o.write) })
			runtime.ReadMemStats(&m1)
			alloc = int64(m1.TotalAlloc - m0.TotalAlloc)
			if cw, ok := w.(*collioWorkload); ok && err == nil {
				st, _ = cw.f.Stats()
				aggs = cw.f.Aggregators()
			}
			if err == nil && o.write && o.iter == 1 {
				info = w.info()
			}
		}
		if err == nil && o.write {
			err = step(3, w.sync)
		}
		if cerr := step(4, w.close); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opName, err)
	}

	// Maxima: phases, allocations, collio's durations. Sums: bad values,
	// messages, bytes. -1 marks "no value" for the allocation split.
	aggAlloc, otherAlloc := int64(-1), int64(-1)
	if o.kind == "collio" {
		if slices.Contains(aggs, c.Rank()) {
			aggAlloc = alloc
		} else {
			otherAlloc = alloc
		}
	}
	maxv := append(local, alloc, aggAlloc, otherAlloc,
		int64(st.Plan), int64(st.ReqExchange), int64(st.Shuffle), int64(st.IO), int64(st.RMW), int64(st.Total))
	if err := c.AllreduceInt64(maxv, maxv, comm.OpMax); err != nil {
		return nil, err
	}
	var bad int
	if !o.write {
		bad, _ = b.verifyBytes(g, buf)
	}
	sumv := []int64{int64(bad), st.MsgsSent, st.MsgsRecv, st.BytesSent, st.BytesRecv}
	if err := c.AllreduceInt64(sumv, sumv, comm.OpSum); err != nil {
		return nil, err
	}

	r := &result{Impl: o.impl, Kind: o.kind, Op: opName, Iter: o.iter, Bytes: total, Seconds: map[string]float64{}, Bad: sumv[0], info: info}
	for i, p := range phaseNames {
		s := float64(maxv[i]) / 1e9
		r.Seconds[p] = s
		r.Total += s
	}
	r.XferMiBs = mibs(total, r.Seconds["xfer"])
	r.TotalMiB = mibs(total, r.Total)
	m := maxv[len(phaseNames):]
	r.Alloc = allocStats{Max: m[0], AggregatorMax: m[1], OtherMax: m[2], AggregatorRanks: aggs}
	if o.kind == "collio" {
		sec := func(ns int64) float64 { return float64(ns) / 1e9 }
		r.Collio = &breakdown{
			Strategy: st.Strategy, Reason: st.Reason, Rounds: st.Rounds, Aggregators: st.Aggregators,
			Plan: sec(m[3]), Exchange: sec(m[4]), Shuffle: sec(m[5]), IO: sec(m[6]), RMW: sec(m[7]), Total: sec(m[8]),
			MsgsSent: sumv[1], MsgsRecv: sumv[2], BytesSent: sumv[3], BytesRecv: sumv[4],
		}
	}
	if r.Bad > 0 {
		return r, fmt.Errorf("read back %d wrong values", r.Bad)
	}
	return r, nil
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

func (w *collioWorkload) sync() error             { return w.f.Sync() }
func (w *collioWorkload) info() map[string]string { return w.f.Info() }
func (w *collioWorkload) close() error            { return w.f.Close() }

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
