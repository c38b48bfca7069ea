package twophase

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/collio/collio/metrics"
)

// Read runs a two-phase collective read on this rank and returns the
// number of bytes read: fewer than the access size only where the access
// extends past end of file. Every rank of j.Comm must call it with the same
// Aggregators and Ranges.
func Read(j *Job) (int64, error) {
	e, err := newEngine(j)
	if err != nil {
		return 0, err
	}
	if e.rounds == 0 {
		return 0, nil
	}
	size, err := e.fileSize()
	if err != nil {
		return 0, err
	}
	for m := 0; m < e.rounds; m++ {
		if err := e.readRound(m); err != nil {
			return 0, err
		}
	}
	if e.ioErr != nil {
		return 0, e.ioErr
	}
	// Bytes of the access that lie before end of file.
	fs := j.fileStream()
	before, err := fs.DataBefore(size)
	if err != nil {
		return 0, err
	}
	return min(max(before-j.Access.DataStart, 0), j.Access.Size), nil
}

// fileSize has the first aggregator learn the file size and broadcast it,
// so that ranks that did not open the file know where it ends.
func (e *engine) fileSize() (int64, error) {
	var b [8]byte
	root := e.j.Aggregators[0]
	if e.rank == root {
		size, err := e.j.File.Size()
		if err != nil {
			e.ioErr = err
		}
		binary.LittleEndian.PutUint64(b[:], uint64(size))
	}
	if err := e.j.Comm.Bcast(b[:], root); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), nil
}

func (e *engine) readRound(m int) error {
	if err := e.requests(m); err != nil {
		return err
	}
	j := e.j
	// Aggregators read the span of the round's requests with one call
	// (data sieving) and pack each source's pieces in its list order.
	var send []byte
	if e.aggregator() {
		send = e.readWindow()
	}
	off := 0
	for s := 0; s < e.size; s++ {
		e.sdispls[s], e.scounts[s] = off, int(e.srcBytes[s])
		off += int(e.srcBytes[s])
	}
	// A contiguous user buffer receives in place.
	recv := j.Access.Buf
	packed := !j.memContiguous()
	total := 0
	for p := 0; p < e.size; p++ {
		e.rcounts[p], e.rdispls[p] = 0, 0
		i := e.domainOf[p]
		if i < 0 {
			continue
		}
		e.rcounts[p] = int(e.hi[i] - e.lo[i])
		if packed {
			e.rdispls[p] = total
			total += e.rcounts[p]
		} else {
			e.rdispls[p] = int(e.lo[i])
		}
	}
	if packed {
		recv = e.dataRecv.get(int64(total))
	}
	done := metrics.Timer(&e.stats.Shuffle)
	err := j.Comm.Alltoallv(send, e.scounts, e.sdispls, recv, e.rcounts, e.rdispls)
	done()
	if err != nil {
		return err
	}
	e.countV(e.scounts, e.rcounts)
	if packed {
		for p := 0; p < e.size; p++ {
			i := e.domainOf[p]
			if i < 0 {
				continue
			}
			at := int64(e.rdispls[p])
			for _, pc := range e.mine[i] {
				copy(j.Access.Buf[pc.mem:pc.mem+pc.n], recv[at:at+pc.n])
				at += pc.n
			}
		}
	}
	return nil
}

// readWindow reads what the sources asked for in this round and returns
// it packed source by source. On a file error it records the error and
// returns zeros, so the exchange still completes everywhere.
func (e *engine) readWindow() []byte {
	bySrc, sorted := e.entries()
	var total int64
	for _, b := range e.srcBytes {
		total += b
	}
	send := e.dataSend.get(total)
	if len(sorted) == 0 || e.ioErr != nil {
		clear(send)
		return send
	}
	span, _, _ := shape(sorted)
	f := e.j.File
	if e.j.Atomic {
		if err := f.Lock(span.Start, span.Len(), false); err != nil {
			e.ioErr = err
			clear(send)
			return send
		}
		defer f.Unlock(span.Start, span.Len())
	}
	win := e.window.get(span.Len())
	done := metrics.Timer(&e.stats.IO)
	n, err := f.ReadAt(win, span.Start)
	done()
	if err != nil && !errors.Is(err, io.EOF) {
		e.ioErr = err
		clear(send)
		return send
	}
	clear(win[n:]) // past end of file
	for _, x := range bySrc {
		copy(send[x.at:x.at+x.n], win[x.off-span.Start:])
	}
	return send
}
