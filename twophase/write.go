package twophase

import (
	"errors"
	"io"

	"github.com/collio/collio/metrics"
)

// Write runs a two-phase collective write on this rank. Every rank of
// j.Comm must call it with the same Aggregators, Ranges and hints. The
// error is this rank's (a file error on an aggregator, or a communication
// error); the caller agrees on errors across ranks.
func Write(j *Job) error {
	e, err := newEngine(j)
	if err != nil {
		return err
	}
	for m := 0; m < e.rounds; m++ {
		if err := e.writeRound(m); err != nil {
			return err
		}
	}
	return e.ioErr
}

func (e *engine) writeRound(m int) error {
	if err := e.requests(m); err != nil {
		return err
	}
	j := e.j
	// The data, in peer rank order. A contiguous user buffer is sent in
	// place: each aggregator's part is one slice of it.
	send := j.Access.Buf
	packed := !e.j.memContiguous()
	if packed {
		send = e.dataSend.appendTo()
	}
	for p := 0; p < e.size; p++ {
		e.scounts[p], e.sdispls[p] = 0, 0
		i := e.domainOf[p]
		if i < 0 {
			continue
		}
		e.scounts[p] = int(e.hi[i] - e.lo[i])
		if !packed {
			e.sdispls[p] = int(e.lo[i])
			continue
		}
		e.sdispls[p] = len(send)
		for _, pc := range e.mine[i] {
			send = append(send, j.Access.Buf[pc.mem:pc.mem+pc.n]...)
		}
	}
	if packed {
		e.dataSend.keep(send)
	}
	total := int64(0)
	for s := 0; s < e.size; s++ {
		e.rdispls[s], e.rcounts[s] = int(total), int(e.srcBytes[s])
		total += e.srcBytes[s]
	}
	// Only aggregators hold received data: at most their window per round.
	recv := e.dataRecv.get(total)
	done := metrics.Timer(&e.stats.Shuffle)
	err := j.Comm.Alltoallv(send, e.scounts, e.sdispls, recv, e.rcounts, e.rdispls)
	done()
	if err != nil {
		return err
	}
	e.countV(e.scounts, e.rcounts)
	if total > 0 && e.ioErr == nil {
		e.ioErr = e.writeWindow(recv)
	}
	return nil
}

// writeWindow writes the data an aggregator received in one round.
func (e *engine) writeWindow(data []byte) error {
	bySrc, sorted := e.entries()
	span, holes, overlaps := shape(sorted)
	f := e.j.File
	if e.j.Atomic {
		if err := f.Lock(span.Start, span.Len(), true); err != nil {
			return err
		}
		defer f.Unlock(span.Start, span.Len())
	}
	if !overlaps && (!holes || !e.j.RMW) {
		// Each contiguous run with one vectored write, straight from the
		// receive buffer.
		defer metrics.Timer(&e.stats.IO)()
		var iov [][]byte
		runStart, runEnd := sorted[0].off, sorted[0].off
		for _, x := range sorted {
			if x.off != runEnd {
				if _, err := f.WriteV(iov, runStart); err != nil {
					return err
				}
				iov, runStart = iov[:0], x.off
			}
			iov = append(iov, data[x.at:x.at+x.n])
			runEnd = x.off + x.n
		}
		_, err := f.WriteV(iov, runStart)
		return err
	}
	// Read-modify-write: read the span, lay the pieces over it in rank
	// order (so on overlaps the higher rank wins, as in ROMIO's atomic
	// mode), write it back in one call.
	win := e.window.get(span.Len()) // without holes the pieces cover all of it
	if holes {
		done := metrics.Timer(&e.stats.RMW)
		n, err := f.ReadAt(win, span.Start)
		done()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		clear(win[n:])
	}
	for _, x := range bySrc {
		copy(win[x.off-span.Start:], data[x.at:x.at+x.n])
	}
	defer metrics.Timer(&e.stats.IO)()
	_, err := f.WriteAt(win, span.Start)
	return err
}
