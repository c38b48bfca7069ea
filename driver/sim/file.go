package sim

import (
	"sync/atomic"
	"time"

	"github.com/collio/collio/driver"
)

// file is an open sim file: ufs I/O on the data file, with the cost of
// each call booked on the shared state and slept before returning.
type file struct {
	inner  driver.File
	m      model
	st     *state
	clock  Clock
	writer int64

	requests, bytes, revocations atomic.Int64
	modeled                      atomic.Int64 // ns of booked service time this file waited for
}

// Stats counts what one open File did under the cost model.
type Stats struct {
	Requests    int64         // reads and writes booked
	Bytes       int64         // their bytes
	Revocations int64         // stripe locks this file took from other holders
	Waited      time.Duration // total time from issuing a request to its modeled completion
	// AllRevocations counts the revocations of every writer of the file
	// since it was created, from the shared state.
	AllRevocations int64
}

// StatsOf returns the statistics of the sim File in f's decorator chain
// (driver.As), such as under the faulty driver.
func StatsOf(f driver.File) (Stats, bool) {
	if sf, ok := driver.As[*file](f); ok {
		return sf.stats(), true
	}
	return Stats{}, false
}

// wRevocations is a reserved header word: all writers' revocations.
const wRevocations = 5

func (f *file) stats() Stats {
	s := Stats{
		Requests:    f.requests.Load(),
		Bytes:       f.bytes.Load(),
		Revocations: f.revocations.Load(),
		Waited:      time.Duration(f.modeled.Load()),
	}
	if f.st.lock() {
		s.AllRevocations = f.st.load(wRevocations)
		f.st.unlock()
	}
	return s
}

// book reserves a read or write of n bytes at off and returns when it
// completes; invalid ranges are left to the data file to reject.
func (f *file) book(off, n int64, write bool) int64 {
	now := f.clock.Now()
	if n <= 0 || off < 0 || !f.st.lock() {
		return now
	}
	end, rev := f.m.book(f.st, now, f.writer, off, n, write)
	if rev > 0 {
		f.st.store(wRevocations, f.st.load(wRevocations)+rev)
	}
	f.st.unlock()
	f.requests.Add(1)
	f.bytes.Add(n)
	f.revocations.Add(rev)
	f.modeled.Add(end - now)
	return end
}

// metadata costs a metadata request one latency.
func (f *file) metadata() {
	f.clock.SleepUntil(f.clock.Now() + int64(f.m.p.latency))
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	end := f.book(off, int64(len(p)), false)
	n, err := f.inner.ReadAt(p, off)
	f.clock.SleepUntil(end)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	end := f.book(off, int64(len(p)), true)
	n, err := f.inner.WriteAt(p, off)
	f.clock.SleepUntil(end)
	return n, err
}

func (f *file) WriteV(bufs [][]byte, off int64) (int, error) {
	end := f.book(off, totalLen(bufs), true)
	n, err := f.inner.WriteV(bufs, off)
	f.clock.SleepUntil(end)
	return n, err
}

func (f *file) ReadV(bufs [][]byte, off int64) (int, error) {
	end := f.book(off, totalLen(bufs), false)
	n, err := f.inner.ReadV(bufs, off)
	f.clock.SleepUntil(end)
	return n, err
}

func totalLen(bufs [][]byte) int64 {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	return n
}

// Sync, Truncate and Allocate cost one latency each: they are metadata
// requests here, not data transfers.
func (f *file) Sync() error {
	f.metadata()
	return f.inner.Sync()
}

func (f *file) Truncate(size int64) error {
	f.metadata()
	return f.inner.Truncate(size)
}

func (f *file) Allocate(off, length int64) error {
	f.metadata()
	return f.inner.Allocate(off, length)
}

func (f *file) Size() (int64, error) { return f.inner.Size() }

// Lock and Unlock are the data file's real byte-range locks (ufs OFD
// locks), free of modeled cost; the modeled stripe locks are separate.
func (f *file) Lock(off, length int64, exclusive bool) error {
	return f.inner.Lock(off, length, exclusive)
}

func (f *file) Unlock(off, length int64) error { return f.inner.Unlock(off, length) }

// Layout reports the emulated striping.
func (f *file) Layout() driver.Layout { return f.m.p.layout() }

// Unwrap returns the ufs file of the data (driver.DirectOf looks through it).
func (f *file) Unwrap() driver.File { return f.inner }

func (f *file) Close() error {
	err := f.inner.Close()
	if serr := f.st.close(); err == nil {
		err = serr
	}
	return err
}
