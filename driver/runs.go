package driver

import (
	"errors"
	"io"
)

// Run is a contiguous range of the file starting at Off and the buffers
// that fill it, in order.
type Run struct {
	Off  int64
	Bufs [][]byte
}

// Len is the run's length in bytes.
func (r Run) Len() int64 {
	n := int64(0)
	for _, b := range r.Bufs {
		n += int64(len(b))
	}
	return n
}

// RunWriter is a File that writes many runs with one call into the
// operating system's side of the runtime. Go hands a goroutine's
// processor to another thread around each blocking system call that
// outlasts a scheduler tick; a round of a collective write is many such
// calls, and with ranks sharing cores the hand-offs cost bandwidth.
type RunWriter interface {
	WriteRuns(runs []Run) (int64, error)
}

// RunReader is a File that reads many runs with one call into the
// operating system's side of the runtime, as RunWriter writes them.
type RunReader interface {
	ReadRuns(runs []Run) (int64, error)
}

// ReadRuns fills every run, in order, and returns the bytes that came
// from the file: bytes past end of file read as zeros. It goes in one
// batch when f is a RunReader, else run by run with ReadV, and stops at
// the first error.
func ReadRuns(f File, runs []Run) (int64, error) {
	if r, ok := f.(RunReader); ok {
		return r.ReadRuns(runs)
	}
	return ReadEach(f, runs)
}

// ReadEach reads the runs one by one with ReadV (bytes past end of file
// read as zeros), stopping at the first error: ReadRuns's fallback, for a
// RunReader's own use too.
func ReadEach(f File, runs []Run) (int64, error) {
	total := int64(0)
	for _, r := range runs {
		n, err := f.ReadV(r.Bufs, r.Off)
		total += int64(n)
		if errors.Is(err, io.EOF) {
			zeroAfter(r.Bufs, int64(n))
			continue
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// zeroAfter clears the buffers after their first n bytes.
func zeroAfter(bufs [][]byte, n int64) {
	for _, b := range bufs {
		if n >= int64(len(b)) {
			n -= int64(len(b))
			continue
		}
		clear(b[n:])
		n = 0
	}
}

// WriteRuns writes every run, in order, and returns the bytes written: in
// one batch when f is a RunWriter, else run by run with WriteV. It stops
// at the first error, which is returned as the file reported it.
func WriteRuns(f File, runs []Run) (int64, error) {
	if w, ok := f.(RunWriter); ok {
		return w.WriteRuns(runs)
	}
	return WriteEach(f, runs)
}

// WriteEach writes the runs one by one with WriteV, stopping at the first
// error: WriteRuns's fallback, for a RunWriter's own use too.
func WriteEach(f File, runs []Run) (int64, error) {
	total := int64(0)
	for _, r := range runs {
		n, err := f.WriteV(r.Bufs, r.Off)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// HeldBufs is how many buffers a Held gathers before Add reports it full.
const HeldBufs = 4096

// Held gathers runs whose buffers stay valid until they are moved, so that
// they reach the file in batches (one RunWriter or RunReader call each)
// instead of one call per run. The zero value is ready.
type Held struct {
	Limit int // buffers before Add reports the batch full; 0 means HeldBufs
	runs  []Run
	bufs  int
	slab  [][]byte // AddCopy's copies of buffer lists, reused from batch to batch
}

// AddCopy is Add for one run whose buffer list the caller reuses: the list
// is copied into storage the Held keeps from batch to batch, so a run
// costs no allocation of its own.
func (h *Held) AddCopy(off int64, bufs [][]byte) bool {
	start := len(h.slab)
	h.slab = append(h.slab, bufs...)
	return h.Add(Run{Off: off, Bufs: h.slab[start:len(h.slab):len(h.slab)]})
}

// Add keeps the runs and reports whether the batch is full.
func (h *Held) Add(runs ...Run) bool {
	h.runs = append(h.runs, runs...)
	for _, r := range runs {
		h.bufs += len(r.Bufs)
	}
	limit := h.Limit
	if limit <= 0 {
		limit = HeldBufs
	}
	return h.bufs >= limit
}

// Bytes is the length of the held runs.
func (h *Held) Bytes() int64 {
	n := int64(0)
	for _, r := range h.runs {
		n += r.Len()
	}
	return n
}

// Empty reports whether nothing is held.
func (h *Held) Empty() bool { return len(h.runs) == 0 }

// Move writes (or reads) the held runs with WriteRuns (ReadRuns), empties
// the batch and returns their count and error.
func (h *Held) Move(f File, write bool) (int64, error) {
	if h.Empty() {
		return 0, nil
	}
	var n int64
	var err error
	if write {
		n, err = WriteRuns(f, h.runs)
	} else {
		n, err = ReadRuns(f, h.runs)
	}
	clear(h.runs) // the callers' buffers must not stay reachable
	clear(h.slab)
	h.runs, h.bufs, h.slab = h.runs[:0], 0, h.slab[:0]
	return n, err
}

// WriteVAt writes bufs one after another from off with w.WriteAt: WriteV
// for a file with no vectored call of its own.
func WriteVAt(w io.WriterAt, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := w.WriteAt(b, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// ReadVAt reads bufs one after another from off with r.ReadAt: ReadV for
// a file with no vectored call of its own.
func ReadVAt(r io.ReaderAt, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := r.ReadAt(b, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
