package coll

import (
	"encoding/binary"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// IOResult is the outcome of one round's file I/O.
type IOResult struct {
	Err     error
	IO, RMW time.Duration
}

// Pipeline runs the rounds' file I/O of one call on one rank: at once,
// or with Overlap in a goroutine behind the next round's exchange. A
// round's state lives in one of two slots, so that one round's I/O can
// run while the next is exchanged in the other. Only one I/O is in flight
// at a time: overlap hides file I/O behind the exchange, not behind more
// file I/O (two writers of one process on one file only queue on its
// lock). File errors never stop the rounds, so that peers never hang: the
// first is kept in Err.
type Pipeline struct {
	Overlap bool
	Stats   *metrics.Call // receives IO, RMW and IOWait
	Err     error
	pending [2]chan IOResult
}

// Start runs a round's file I/O for the state in slot (0 or 1).
func (p *Pipeline) Start(slot int, io func() IOResult) {
	if !p.Overlap {
		p.Record(io())
		return
	}
	p.Wait(1 - slot)
	ch := make(chan IOResult, 1)
	p.pending[slot] = ch
	go func() { ch <- io() }()
}

// Wait waits for the file I/O in flight for slot, if any: its state is
// free again afterwards.
func (p *Pipeline) Wait(slot int) {
	ch := p.pending[slot]
	if ch == nil {
		return
	}
	start := time.Now()
	r := <-ch
	p.pending[slot] = nil
	p.finish(r, time.Since(start))
}

// Drain waits for all file I/O in flight.
func (p *Pipeline) Drain() {
	p.Wait(0)
	p.Wait(1)
}

// Record records file I/O that ran in the caller's goroutine: all of it
// was waited for.
func (p *Pipeline) Record(r IOResult) { p.finish(r, r.IO+r.RMW) }

// Fail keeps err as the rank's file error unless it has one already.
func (p *Pipeline) Fail(err error) {
	if err != nil && p.Err == nil {
		p.Err = err
	}
}

func (p *Pipeline) finish(r IOResult, waited time.Duration) {
	p.Stats.IO += r.IO
	p.Stats.RMW += r.RMW
	p.Stats.IOWait += waited
	p.Fail(r.Err)
}

// BroadcastFileSize has root ask f for the file size and broadcast it, so
// that ranks that did not open the file know where it ends. A file error
// on root is returned as fileErr (the others then see size 0); the call
// goes on so that no peer hangs. err is a communication error.
func BroadcastFileSize(c comm.Comm, f driver.File, root int) (size int64, fileErr, err error) {
	var b [8]byte
	if c.Rank() == root {
		size, fileErr = f.Size()
		binary.LittleEndian.PutUint64(b[:], uint64(size))
	}
	if err := c.Bcast(b[:], root); err != nil {
		return 0, fileErr, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), fileErr, nil
}
