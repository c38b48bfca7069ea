package twophase

import (
	"fmt"
	"slices"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// Write runs a two-phase collective write on this rank, its file domains
// drawn by rule. Every rank of j.Comm must call it with the same
// Aggregators, Ranges and rule. The error is this rank's (a file error on
// an aggregator, or a communication error); the caller agrees on errors
// across ranks.
func Write(j *coll.Job, rule DomainRule) error {
	defer comm.SetPhase(j.Comm, "")
	e, err := newEngine(j, rule)
	if err != nil {
		return err
	}
	defer e.io.Drain()
	if j.RMW && e.aggregator() {
		e.oldEnd = coll.FileEnd(j.File) // before the first exchange
	}
	for m := 0; m < e.rounds; m++ {
		st := &e.st[m%2]
		e.io.Wait(e.slot(st)) // its buffers are free again once round m-2 is written
		if err := e.writeRound(m, st); err != nil {
			return err
		}
	}
	e.io.Record(e.flushHeld(true))
	e.io.Drain()
	return e.io.Err
}

func (e *engine) writeRound(m int, st *roundState) error {
	if err := e.requests(m, st); err != nil {
		return err
	}
	j := e.j
	// The data, in peer rank order. A contiguous user buffer is sent in
	// place: each aggregator's part is one slice of it.
	send := j.Access.Buf
	packed := !st.inPlace
	if packed {
		// Sized once: growing by append would copy and fault in fresh
		// pages several times over (E3SM's I case packs 30 MiB a rank).
		var need int64
		for p := 0; p < e.size; p++ {
			if i := e.domainOf[p]; i >= 0 {
				need += st.n[i]
			}
		}
		send = st.send.Get(need)[:0]
	}
	for p := 0; p < e.size; p++ {
		e.scounts[p], e.sdispls[p] = 0, 0
		i := e.domainOf[p]
		if i < 0 {
			continue
		}
		e.scounts[p] = int(st.n[i])
		if !packed {
			e.sdispls[p] = int(st.lo[i])
			continue
		}
		e.sdispls[p] = len(send)
		for _, pc := range st.mine[i] {
			send = append(send, j.Access.Buf[pc.Mem:pc.Mem+pc.N]...)
		}
	}
	if packed {
		st.send.Keep(send)
	}
	total := int64(0)
	for s := 0; s < e.size; s++ {
		e.rdispls[s], e.rcounts[s] = int(total), int(st.srcBytes[s])
		total += st.srcBytes[s]
	}
	// This rank's data for its own window is written from where it is, not
	// copied through the exchange (MPI's copy to self ran at about 2 GB/s
	// here, a Go copy at 25), and takes no room in recv: the sources after
	// it move down (pieceData maps the pieces' positions).
	st.self, st.selfAt = nil, 0
	if n := e.scounts[e.rank]; n > 0 {
		st.self = send[e.sdispls[e.rank] : e.sdispls[e.rank]+n]
		st.selfAt = int64(e.rdispls[e.rank])
		e.scounts[e.rank], e.rcounts[e.rank] = 0, 0
		for s := e.rank + 1; s < e.size; s++ {
			e.rdispls[s] -= n
		}
		total -= int64(n)
	}
	// Only aggregators hold received data: at most their window per round.
	recv := st.recv.Get(total)
	done := metrics.Timer(&e.stats.Shuffle)
	var err error
	if !e.local { // nothing to move otherwise
		comm.SetPhase(j.Comm, PhaseData)
		err = j.Comm.Alltoallv(send, e.scounts, e.sdispls, recv, e.rcounts, e.rdispls)
		comm.SetPhase(j.Comm, "")
	}
	done()
	if err != nil {
		return err
	}
	e.countV(e.scounts, e.rcounts)
	e.countCross(e.scounts)
	if total+int64(len(st.self)) > 0 && e.io.Err == nil {
		e.io.Start(e.slot(st), func() coll.IOResult { return e.writeWindow(st, recv) })
	}
	return nil
}

// writeWindow writes the data an aggregator received in one round, range
// by range of its window: a hole between two ranges belongs to another
// aggregator and is never read-modify-written. It touches only st and the
// file, so it can run behind the next exchange.
func (e *engine) writeWindow(st *roundState, data []byte) (r coll.IOResult) {
	sorted := st.sorted
	for _, w := range st.win {
		var seg []coll.Entry
		if seg, sorted = cutBefore(sorted, w.End); len(seg) > 0 {
			if r = e.writeRange(st, data, seg, r); r.Err != nil {
				return r
			}
		}
	}
	if len(sorted) > 0 {
		r.Err = fmt.Errorf("twophase: %d pieces from offset %d lie outside this aggregator's window %v", len(sorted), sorted[0].Off, st.win)
	}
	return r
}

// writeRange writes the pieces of one window range, sorted by offset.
func (e *engine) writeRange(st *roundState, data []byte, sorted []coll.Entry, acc coll.IOResult) (r coll.IOResult) {
	r = acc
	span, holes, overlaps := shape(sorted)
	f := e.j.File
	if e.j.Atomic {
		if r.Err = f.Lock(span.Start, span.Len(), true); r.Err != nil {
			return r
		}
		defer f.Unlock(span.Start, span.Len())
	}
	if !overlaps && (!holes || !e.j.RMW || e.own) {
		hold := e.own && st.inPlace && !e.j.Atomic
		if !hold && coll.CopyPieces(sorted) {
			// Tiny pieces: copying each into the window costs less than
			// an iovec each (pinned, and walked by the kernel); every
			// run is then one buffer.
			r.Err = e.writeChunks(st, data, sorted, span, false, &r)
			return r
		}
		// Each contiguous run with one vectored write, straight from the
		// receive buffer; the round's runs in one batch where the driver
		// can (driver.RunWriter).
		start := time.Now()
		defer func() { r.IO += time.Since(start) }()
		pieces := make([][]byte, 0, len(sorted)) // fixed capacity: the runs share it
		var runs []driver.Run
		runStart, runEnd, from := sorted[0].Off, sorted[0].Off, 0
		for _, x := range sorted {
			if x.Off != runEnd {
				runs = append(runs, driver.Run{Off: runStart, Bufs: pieces[from:]})
				from, runStart = len(pieces), x.Off
			}
			pieces = append(pieces, e.pieceData(st, data, x))
			runEnd = x.Off + x.N
		}
		runs = append(runs, driver.Run{Off: runStart, Bufs: pieces[from:]})
		if hold { // the lock would be gone before the write
			r.Err = e.hold(runs, true)
			return r
		}
		_, r.Err = driver.WriteRuns(f, runs)
		return r
	}
	if !overlaps {
		// Read-modify-write, a chunk at a time: read the old bytes (none
		// past where the file ended), lay the pieces over them, write.
		r.Err = e.writeChunks(st, data, sorted, span, true, &r)
		return r
	}
	// Overlapping pieces: read the span, lay the pieces over it in rank
	// order (so on overlaps the higher rank wins, as in ROMIO's atomic
	// mode), write it back in one call.
	win := st.window.Get(span.Len())
	if holes {
		start := time.Now()
		r.Err = e.oldEnd.Read(f, win, span.Start)
		r.RMW += time.Since(start)
		if r.Err != nil {
			return r
		}
	}
	// sorted is by (offset, source): a stable sort by source gives each
	// source's pieces in file order, sources in rank order.
	order := slices.Clone(sorted)
	slices.SortStableFunc(order, func(a, b coll.Entry) int { return a.Src - b.Src })
	for _, x := range order {
		copy(win[x.Off-span.Start:], e.pieceData(st, data, x))
	}
	start := time.Now()
	_, r.Err = f.WriteAt(win, span.Start)
	r.IO += time.Since(start)
	return r
}

// writeChunks writes the sorted, non-overlapping pieces of one window
// range through the window buffer, a chunk at a time (Job.Chunk): with rmw,
// each chunk is read first (up to the old end of file) and written whole;
// without, each contiguous run of pieces in the chunk is written.
func (e *engine) writeChunks(st *roundState, data []byte, sorted []coll.Entry, span coll.Range, rmw bool, r *coll.IOResult) error {
	f := e.j.File
	chunk := e.j.Chunk(e.rule.Stripe)
	win := st.window.Get(min(span.Len(), chunk))
	var runs []driver.Run
	for lo := span.Start; lo < span.End; {
		hi := coll.ChunkEnd(lo, span.End, chunk)
		w := win[:hi-lo]
		if rmw {
			start := time.Now()
			err := e.oldEnd.Read(f, w, lo)
			r.RMW += time.Since(start)
			if err != nil {
				return err
			}
		}
		runs = runs[:0]
		runStart, runEnd := int64(-1), int64(-1)
		for len(sorted) > 0 && sorted[0].Off < hi {
			x := sorted[0]
			a, b := max(x.Off, lo), min(x.End(), hi)
			copy(w[a-lo:b-lo], e.pieceData(st, data, x)[a-x.Off:])
			if a != runEnd {
				if runStart >= 0 {
					runs = append(runs, driver.Run{Off: runStart, Bufs: [][]byte{w[runStart-lo : runEnd-lo]}})
				}
				runStart = a
			}
			runEnd = b
			if x.End() > hi {
				break // its rest goes to the next chunk
			}
			sorted = sorted[1:]
		}
		start := time.Now()
		var err error
		switch {
		case rmw:
			_, err = f.WriteAt(w, lo)
		case runStart >= 0:
			runs = append(runs, driver.Run{Off: runStart, Bufs: [][]byte{w[runStart-lo : runEnd-lo]}})
			_, err = driver.WriteRuns(f, runs)
		}
		r.IO += time.Since(start)
		if err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// pieceData is the data of a requested piece: in the received data, or,
// for the aggregator's own pieces, in its own send data.
func (e *engine) pieceData(st *roundState, data []byte, x coll.Entry) []byte {
	if st.self == nil {
		return data[x.At : x.At+x.N]
	}
	at := x.At
	switch {
	case x.Src == e.rank:
		at -= st.selfAt
		return st.self[at : at+x.N]
	case x.Src > e.rank:
		at -= int64(len(st.self))
	}
	return data[at : at+x.N]
}
