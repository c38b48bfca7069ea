package tam

import (
	"errors"
	"io"
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

func (r *run) write() error {
	var st [2]gState
	defer r.drain(&st)
	for m := 0; m < r.rounds; m++ {
		s := &st[m%2]
		r.wait(s) // its buffers are free again once round m-2 is written
		if err := r.writeRound(m, s); err != nil {
			return err
		}
	}
	r.drain(&st)
	return r.ioErr
}

func (r *run) writeRound(m int, st *gState) error {
	if err := r.cutAll(m); err != nil {
		return err
	}
	comm.SetPhase(r.j.Comm, PhaseLayer1)
	switch {
	case r.isLocal():
		if err := r.localGather(m, true); err != nil {
			return err
		}
		r.localMerge(st, true)
	case r.memberActive(r.rank, m):
		if err := r.memberSend(true); err != nil {
			return err
		}
	}
	comm.SetPhase(r.j.Comm, PhaseLayer2)
	if err := r.exchangeUp(m, st, true); err != nil {
		return err
	}
	comm.SetPhase(r.j.Comm, "")
	if r.isGlobal() && r.ioErr == nil {
		for _, l := range st.lists {
			if len(l) > 0 {
				r.startIO(st, func() ioResult { return r.writeWindow(st) })
				break
			}
		}
	}
	return nil
}

// localMerge merges and coalesces the group's pieces per global
// aggregator and lays out the layer-2 messages in st.send: for each global
// aggregator the extent list, then (writes) the extents' bytes.
func (r *run) localMerge(st *gState, withData bool) {
	defer metrics.Timer(&r.stats.Plan)()
	s := &r.sc
	out := st.send.B[:0]
	for i := range r.aggs {
		s.merged = coll.Merge(s.lists[i], nil, s.merged[:0])
		s.runs = findRuns(s.merged, s.runs[:0])
		u := upMsg{ext: int64(len(s.runs)), start: len(out)}
		var end int64
		for _, rn := range s.runs {
			out = coll.AppendRequest(out, &end, rn.off, rn.n)
			u.bytes += rn.n
		}
		u.list = int64(len(out) - u.start)
		if withData {
			out = coalesce(s.merged, s.runs, s.data[i], out)
		}
		u.end = len(out)
		s.up[i] = u
		if u.ext > 0 {
			r.rep.Extents += u.ext
		}
	}
	st.send.B = out
}

// writeWindow writes what a global aggregator received in one round, as
// twophase does: each contiguous run with one vectored write straight from
// the receive buffers, or, when the window has holes and read-modify-write
// is on (or when extents of different local aggregators overlap), one
// read of the span, the extents laid over it in source order (the higher
// local aggregator wins), one write. It touches only st and the file, so
// it can run behind the next round's exchange.
func (r *run) writeWindow(st *gState) (res ioResult) {
	st.merged = coll.Merge(st.lists, nil, st.merged[:0])
	st.runs = findRuns(st.merged, st.runs[:0])
	if len(st.runs) == 0 {
		return res
	}
	holes := len(st.runs) > 1
	overlaps := false
	for _, rn := range st.runs {
		overlaps = overlaps || rn.overlap
	}
	f := r.j.File
	if !overlaps && (!holes || !r.j.RMW) {
		start := time.Now()
		defer func() { res.io += time.Since(start) }()
		var iov [][]byte
		for _, rn := range st.runs {
			iov = iov[:0]
			for _, e := range st.merged[rn.first:rn.end] {
				iov = append(iov, st.data[e.Src][e.At:e.At+e.N])
			}
			if _, res.err = f.WriteV(iov, rn.off); res.err != nil {
				return res
			}
		}
		return res
	}
	first, last := st.runs[0], st.runs[len(st.runs)-1]
	lo, hi := first.off, last.off+last.n
	win := st.win.Get(hi - lo)
	if holes {
		start := time.Now()
		n, err := f.ReadAt(win, lo)
		res.rmw += time.Since(start)
		if err != nil && !errors.Is(err, io.EOF) {
			res.err = err
			return res
		}
		clear(win[n:])
	}
	for q, l := range st.lists {
		var at int64
		for _, x := range l {
			copy(win[x.Off-lo:], st.data[q][at:at+x.N])
			at += x.N
		}
	}
	start := time.Now()
	_, res.err = f.WriteAt(win, lo)
	res.io += time.Since(start)
	return res
}

// startIO runs a round's file I/O, in a goroutine when overlapping.
func (r *run) startIO(st *gState, fn func() ioResult) {
	if !r.j.Overlap {
		r.finish(fn(), 0)
		return
	}
	st.pending = make(chan ioResult, 1)
	go func() { st.pending <- fn() }()
}

// wait waits for a state's file I/O in flight, if any.
func (r *run) wait(st *gState) {
	if st.pending == nil {
		return
	}
	start := time.Now()
	res := <-st.pending
	st.pending = nil
	r.finish(res, time.Since(start))
}

func (r *run) drain(st *[2]gState) {
	for k := range st {
		r.wait(&st[k])
	}
}

// finish records a round's I/O outcome; waited is how long the caller
// blocked for it.
func (r *run) finish(res ioResult, waited time.Duration) {
	r.stats.IO += res.io
	r.stats.RMW += res.rmw
	if r.j.Overlap {
		r.stats.IOWait += waited
	} else {
		r.stats.IOWait += res.io + res.rmw
	}
	if res.err != nil && r.ioErr == nil {
		r.ioErr = res.err
	}
}
