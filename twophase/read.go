package twophase

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// Read runs a two-phase collective read on this rank and returns the
// number of bytes read: fewer than the access size only where the access
// extends past end of file. Every rank of j.Comm must call it with the same
// Aggregators, Ranges and rule. With j.EOF set it returns the access size
// and leaves the count to the caller (coll.EndOfFile).
//
// Rounds are pipelined: the requests of round m+1 are exchanged, and (with
// overlap) its file reads started, before round m's data is sent back.
func Read(j *coll.Job, rule DomainRule) (int64, error) {
	defer comm.SetPhase(j.Comm, "")
	e, err := newEngine(j, rule)
	if err != nil {
		return 0, err
	}
	if e.rounds == 0 {
		return 0, nil
	}
	defer e.io.Drain()
	// The caller may agree on the end of the file (coll.EndOfFile); else
	// the first aggregator asks the file and tells the others.
	var size int64 // unused where the caller counts
	if !j.EOF.Take() {
		if size, err = e.fileSize(); err != nil {
			return 0, err
		}
	}
	if err := e.prepareRead(0, &e.st[0]); err != nil {
		return 0, err
	}
	for m := 0; m < e.rounds; m++ {
		if m+1 < e.rounds {
			if err := e.prepareRead(m+1, &e.st[(m+1)%2]); err != nil {
				return 0, err
			}
		}
		st := &e.st[m%2]
		e.io.Wait(e.slot(st))
		if err := e.deliver(st); err != nil {
			return 0, err
		}
	}
	e.io.Record(e.flushHeld(false))
	e.io.Drain()
	if e.io.Err != nil {
		return 0, e.io.Err
	}
	if j.EOF.Taken() {
		return j.Access.Size, nil
	}
	return j.Access.BytesBefore(size)
}

// fileSize has the first aggregator learn the file size and broadcast it,
// so that ranks that did not open the file know where it ends. Without an
// exchange (local) only aggregators have data, and each asks the file.
func (e *engine) fileSize() (int64, error) {
	if e.local {
		if !e.aggregator() {
			return 0, nil // no data here: nothing to count
		}
		size, err := e.j.File.Size()
		e.io.Fail(err)
		return size, nil
	}
	size, fileErr, err := coll.BroadcastFileSize(e.j.Comm, e.j.File, e.aggs[0])
	e.io.Fail(fileErr)
	return size, err
}

// prepareRead exchanges round m's requests and, on aggregators, starts
// reading what was asked for into the state's send buffer.
func (e *engine) prepareRead(m int, st *roundState) error {
	if err := e.requests(m, st); err != nil {
		return err
	}
	// An aggregator reads its own pieces straight into a contiguous user
	// buffer: no copy through the send buffer, nothing through MPI.
	st.self, st.selfAt = nil, 0
	if i := e.domainOf[e.rank]; i >= 0 && st.inPlace && st.n[i] > 0 {
		st.self = e.j.Access.Buf[st.lo[i]:st.hi[i]]
		for s := 0; s < e.rank; s++ {
			st.selfAt += st.srcBytes[s]
		}
	}
	if e.aggregator() {
		e.io.Start(e.slot(st), func() coll.IOResult { return e.readWindow(st) })
	}
	return nil
}

// readDst is where a requested piece is read to: its slot in send, or,
// for the aggregator's own pieces, the user's buffer (see prepareRead).
func (e *engine) readDst(st *roundState, send []byte, x coll.Entry) []byte {
	at := x.At
	if st.self != nil {
		switch {
		case x.Src == e.rank:
			at -= st.selfAt
			return st.self[at : at+x.N]
		case x.Src > e.rank:
			at -= int64(len(st.self)) // send has no room for this rank's own data
		}
	}
	return send[at : at+x.N]
}

// deliver sends a round's data from the aggregators back to the ranks.
func (e *engine) deliver(st *roundState) error {
	j := e.j
	var send []byte
	off := 0
	for s := 0; s < e.size; s++ {
		e.sdispls[s], e.scounts[s] = off, int(st.srcBytes[s])
		if s == e.rank && st.self != nil {
			continue // read in place: no room in send
		}
		off += int(st.srcBytes[s])
	}
	if e.aggregator() {
		send = st.send.B[:off]
	}
	// A contiguous user buffer receives in place.
	recv := j.Access.Buf
	packed := !st.inPlace
	total := 0
	for p := 0; p < e.size; p++ {
		e.rcounts[p], e.rdispls[p] = 0, 0
		i := e.domainOf[p]
		if i < 0 {
			continue
		}
		e.rcounts[p] = int(st.n[i])
		if packed {
			e.rdispls[p] = total
			total += e.rcounts[p]
		} else {
			e.rdispls[p] = int(st.lo[i])
		}
	}
	if packed {
		recv = st.recv.Get(int64(total))
	}
	done := metrics.Timer(&e.stats.Shuffle)
	// An aggregator's data for itself is already in place (read there) or
	// copied here: a Go copy is faster than MPI's copy to self.
	if n := e.scounts[e.rank]; n > 0 && n == e.rcounts[e.rank] {
		if st.self == nil {
			copy(recv[e.rdispls[e.rank]:e.rdispls[e.rank]+n], send[e.sdispls[e.rank]:e.sdispls[e.rank]+n])
		}
		e.scounts[e.rank], e.rcounts[e.rank] = 0, 0
	}
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
	if packed {
		for p := 0; p < e.size; p++ {
			i := e.domainOf[p]
			if i < 0 {
				continue
			}
			at := int64(e.rdispls[p])
			for _, pc := range st.mine[i] {
				copy(j.Access.Buf[pc.Mem:pc.Mem+pc.N], recv[at:at+pc.N])
				at += pc.N
			}
		}
	}
	return nil
}

// readWindow reads what the sources asked for in one round into the
// state's send buffer, packed source by source. On a file error the buffer
// holds zeros and the error is returned, so the exchange still completes
// everywhere. It touches only st and the file.
func (e *engine) readWindow(st *roundState) (r coll.IOResult) {
	var total int64
	for _, b := range st.srcBytes {
		total += b
	}
	total -= int64(len(st.self)) // read in place, not into send
	send := st.send.Get(total)
	fail := func(err error) coll.IOResult {
		clear(send)
		r.Err = err
		return r
	}
	if len(st.sorted) == 0 {
		return r
	}
	span, _, _ := shape(st.sorted)
	f := e.j.File
	if e.j.Atomic {
		if err := f.Lock(span.Start, span.Len(), false); err != nil {
			return fail(err)
		}
		defer f.Unlock(span.Start, span.Len())
	}
	held := e.own && st.self != nil && !e.j.Atomic // see readRuns
	if _, _, overlaps := shape(st.sorted); !overlaps && (held || !coll.CopyPieces(st.sorted)) {
		// Read straight into each source's slot of the send buffer: one
		// preadv per run, small gaps read into scratch (data sieving
		// without the copy out of a window).
		start := time.Now()
		err := e.readRuns(st, send)
		r.IO += time.Since(start)
		if err != nil {
			return fail(err)
		}
		return r
	}
	// Overlapping requests, or tiny pieces: read the span of each window
	// range once, a chunk at a time through one buffer (Job.Chunk), and
	// copy each piece's part of the chunk out.
	chunk := e.j.Chunk(e.rule.Stripe)
	sorted := st.sorted
	for _, w := range st.win {
		var seg []coll.Entry
		if seg, sorted = cutBefore(sorted, w.End); len(seg) == 0 {
			continue
		}
		span, _, _ := shape(seg)
		win := st.window.Get(min(span.Len(), chunk))
		first := 0 // pieces before it end before the chunk
		for lo := span.Start; lo < span.End; {
			hi := coll.ChunkEnd(lo, span.End, chunk)
			buf := win[:hi-lo]
			start := time.Now()
			n, err := f.ReadAt(buf, lo)
			r.IO += time.Since(start)
			if err != nil && !errors.Is(err, io.EOF) {
				return fail(err)
			}
			if n < len(buf) {
				e.j.EOF.Found(lo + int64(n))
			}
			clear(buf[n:]) // past end of file
			for first < len(seg) && seg[first].End() <= lo {
				first++
			}
			for _, x := range seg[first:] {
				if x.Off >= hi {
					break
				}
				if a, b := max(x.Off, lo), min(x.End(), hi); a < b {
					copy(e.readDst(st, send, x)[a-x.Off:b-x.Off], buf[a-lo:])
				}
			}
			lo = hi
		}
	}
	if len(sorted) > 0 {
		return fail(fmt.Errorf("twophase: %d pieces from offset %d lie outside this aggregator's window %v", len(sorted), sorted[0].Off, st.win))
	}
	return r
}

// maxGap is the largest hole between requested pieces that a read covers
// (into scratch) rather than starting another call. A variable for tests.
var maxGap int64 = 64 << 10

// readRuns reads the sorted, non-overlapping pieces of a round into their
// slots of send: one vectored read per run of pieces separated by gaps of
// at most maxGap, the round's runs in one batch where the driver can
// (driver.RunReader). Bytes past end of file are zeros.
func (e *engine) readRuns(st *roundState, send []byte) error {
	var gaps int64
	for i := 1; i < len(st.sorted); i++ {
		if g := st.sorted[i].Off - (st.sorted[i-1].Off + st.sorted[i-1].N); g <= maxGap {
			gaps += g
		}
	}
	scratch := st.window.Get(gaps)
	bufs := make([][]byte, 0, 2*len(st.sorted)) // pieces and gaps; fixed capacity: the runs share it
	var runs []driver.Run
	runStart, end, from := st.sorted[0].Off, st.sorted[0].Off, 0
	for _, x := range st.sorted {
		if g := x.Off - end; g > maxGap {
			runs = append(runs, driver.Run{Off: runStart, Bufs: bufs[from:]})
			from, runStart = len(bufs), x.Off
		} else if g > 0 {
			bufs = append(bufs, scratch[:g])
			scratch = scratch[g:]
		}
		bufs = append(bufs, e.readDst(st, send, x))
		end = x.Off + x.N
	}
	runs = append(runs, driver.Run{Off: runStart, Bufs: bufs[from:]})
	if e.own && st.self != nil && !e.j.Atomic {
		// Own mode reads only into the user's buffer (st.self): nothing
		// needs the data before the call returns.
		return e.hold(runs, false)
	}
	n, err := driver.ReadRuns(e.j.File, runs)
	if err == nil && e.j.EOF.Taken() {
		var want int64
		for _, r := range runs {
			want += r.Len()
		}
		err = e.j.EOF.FoundShort(e.j.File, n, want)
	}
	return err
}
