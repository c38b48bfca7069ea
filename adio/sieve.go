package adio

import (
	"errors"
	"io"
	"sync"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
)

// piece is a run of data that is contiguous both in memory and in the file.
type piece struct{ mem, file, n int64 }

// maxRunPieces bounds the pieces gathered before a flush, so a view with
// millions of tiny pieces never builds a million-entry list.
const maxRunPieces = 4096

// batcher groups the pieces of one transfer, in file order, into batches
// that one driver call (or one read-modify-write) can serve.
//
// With sieving on, a batch is every piece inside a window of at most
// bufSize bytes of file, holes included: holes are read first and written
// back unchanged (ROMIO's data sieving), which turns many small writes into
// one large one. With sieving off, a batch is a run of pieces that are
// adjacent in the file (one pwritev), and holes are never touched.
type batcher struct {
	f     driver.File
	mem   []byte
	sieve bool
	// autoSieve (romio_ds_read/write=automatic): pieces of at least
	// sieveMinPiece are not sieved with their neighbours.
	autoSieve bool
	// maxHole > 0 (automatic read sieving): a hole of at least this many
	// bytes ends the batch, as a large piece does.
	maxHole int64
	bufSize int64
	lock    bool // lock each read-modify-write window (not in atomic mode: the whole range is locked)

	pieces     []piece
	start, end int64 // file range of the pieces gathered so far
	data       int64 // their total length
	window     []byte
	iov        [][]byte
	scratch    *scratch // where window, pieces and iov come from (takeScratch)

	// held: runs moved straight from or to the caller's buffer, kept to
	// move in one batch (driver.WriteRuns, ReadRuns); writes only when no
	// lock is taken per run.
	held    driver.Held
	heldGot int64 // bytes held reads returned from the file
}

func (b *batcher) add(p piece, flush func() error) error {
	if len(b.pieces) > 0 {
		full := len(b.pieces) >= maxRunPieces
		switch {
		case p.file == b.end:
			full = full || b.sieve && p.file+p.n-b.start > b.bufSize
		case !b.sieve:
			full = true
		case b.autoSieve && (p.n >= sieveMinPiece || b.pieces[len(b.pieces)-1].n >= sieveMinPiece):
			full = true // a large piece is moved alone: sieving would only move holes
		case b.maxHole > 0 && p.file-b.end >= b.maxHole:
			full = true // reading the hole costs more than a system call
		default:
			full = full || p.file+p.n-b.start > b.bufSize
		}
		if full {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(b.pieces) == 0 {
		b.start = p.file
		b.data = 0
	}
	b.pieces = append(b.pieces, p)
	b.end = p.file + p.n
	b.data += p.n
	return nil
}

func (b *batcher) reset() { b.pieces = b.pieces[:0] }

// scratch is a batcher's storage, kept between transfers in a pool: small
// transfers that sieve (a tile of a darray view per call) would otherwise
// allocate and clear a window and a piece list per call.
type scratch struct {
	window []byte
	pieces []piece
	iov    [][]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// scratchMax bounds the window a pooled scratch keeps.
const scratchMax = 16 << 20

// takeScratch gives b pooled storage; giveScratch returns it once the
// transfer is done with it.
func (b *batcher) takeScratch() {
	b.scratch = scratchPool.Get().(*scratch)
	b.window, b.pieces, b.iov = b.scratch.window, b.scratch.pieces[:0], b.scratch.iov[:0]
}

func (b *batcher) giveScratch() {
	s := b.scratch
	clear(b.iov[:cap(b.iov)]) // the caller's memory must not stay reachable
	s.pieces, s.iov, s.window = b.pieces[:0], b.iov[:0], nil
	if cap(b.window) <= scratchMax {
		s.window = b.window
	}
	b.window, b.pieces, b.iov, b.scratch = nil, nil, nil, nil
	scratchPool.Put(s)
}

// memIOV returns the memory slices of the gathered pieces.
func (b *batcher) memIOV() [][]byte {
	b.iov = b.iov[:0]
	for _, p := range b.pieces {
		b.iov = append(b.iov, b.mem[p.mem:p.mem+p.n])
	}
	return b.iov
}

// sieveMinPiece is the piece size from which data sieving (automatic)
// leaves a piece alone: one more system call costs less than reading (and
// for writes, writing back) the hole next to it. Collective buffering's
// large pieces (512 KiB rows of collperf's subarrays) read at the speed
// of the file system instead of half of it.
const sieveMinPiece = 32 << 10

// sieveMaxReadHole is the hole from which automatic read sieving reads
// the pieces on either side apart: copying 16 KiB from the page cache
// costs about as much as a system call here. Writes keep sieving such
// holes (a rank that may sieve makes every rank lock its runs, and a
// lock and unlock per run cost more).
const sieveMaxReadHole = 16 << 10

// packPiece is the mean piece size under which a contiguous run of file
// is moved through one buffer (copying the pieces in or out) rather than
// a vectored call: thousands of 8-byte iovecs (a noncontiguous memory
// type over a contiguous file range, as in FLASH-IO) cost more in the
// kernel, split at IOV_MAX, than the copy.
const packPiece = 4096

// packs reports whether the gathered contiguous run goes through a buffer.
func (b *batcher) packs() bool {
	return len(b.pieces) > 1 && b.data < packPiece*int64(len(b.pieces)) && b.end-b.start <= max(b.bufSize, 1<<20)
}

// windowBuf returns a buffer for the current window, reused between windows.
func (b *batcher) windowBuf() []byte {
	span := b.end - b.start
	if int64(cap(b.window)) < span {
		b.window = make([]byte, span)
	}
	return b.window[:span]
}

// flushWrite writes the gathered pieces.
func (b *batcher) flushWrite() error {
	if len(b.pieces) == 0 {
		return nil
	}
	defer b.reset()
	// Every write takes the lock, not only read-modify-writes: another
	// rank's read-modify-write of a window around our bytes would otherwise
	// write back what it read before our write landed.
	if b.lock {
		if err := b.f.Lock(b.start, b.end-b.start, true); err != nil {
			return err
		}
		defer b.f.Unlock(b.start, b.end-b.start)
	}
	if b.data == b.end-b.start {
		if b.packs() {
			w := b.windowBuf()
			for _, p := range b.pieces {
				copy(w[p.file-b.start:], b.mem[p.mem:p.mem+p.n])
			}
			_, err := b.f.WriteAt(w, b.start)
			return err
		}
		if !b.lock {
			return b.hold(b.start, b.memIOV(), true)
		}
		_, err := b.f.WriteV(b.memIOV(), b.start)
		return err
	}
	// Read-modify-write of a window with holes.
	w := b.windowBuf()
	n, err := b.f.ReadAt(w, b.start)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	clear(w[n:]) // past end of file the holes are zeros
	for _, p := range b.pieces {
		copy(w[p.file-b.start:], b.mem[p.mem:p.mem+p.n])
	}
	_, err = b.f.WriteAt(w, b.start)
	return err
}

// hold keeps a run to move with the next ones in one batch: one hand-off
// of the processor per batch where the driver batches. Written runs are
// held only where no lock is taken per run; views are monotonic, so a
// later read-modify-write window never covers a held run.
func (b *batcher) hold(off int64, bufs [][]byte, write bool) error {
	if !b.held.AddCopy(off, bufs) {
		return nil
	}
	return b.moveHeld(write)
}

// moveHeld writes or reads the held runs; reads add the bytes that came
// from the file to heldGot.
func (b *batcher) moveHeld(write bool) error {
	n, err := b.held.Move(b.f, write)
	if !write {
		b.heldGot += n
	}
	return err
}

// finishWrite writes what is gathered and what is held.
func (b *batcher) finishWrite() error {
	if err := b.flushWrite(); err != nil {
		return err
	}
	return b.moveHeld(true)
}

// finishRead reads what is held after a read walk that ended with err
// (nil, or errShort at end of file) and adds what came from the file to
// *got. Held runs come before anything the walk stopped at, views being
// monotonic, so *got still counts a prefix of the data.
func (b *batcher) finishRead(err error, got *int64) error {
	if err != nil && !errors.Is(err, errShort) {
		return err
	}
	if herr := b.moveHeld(false); herr != nil {
		return herr
	}
	*got += b.heldGot
	return err
}

// errShort stops a read walk at end of file.
var errShort = errors.New("short read")

// flushRead reads the gathered pieces and adds the bytes delivered to
// *got. It returns errShort once end of file is reached.
func (b *batcher) flushRead(got *int64) error {
	if len(b.pieces) == 0 {
		return nil
	}
	defer b.reset()
	contiguous := b.data == b.end-b.start
	if contiguous && !b.packs() {
		// Straight into the caller's buffer: held for a batch (bytes
		// past end of file then read as zeros).
		return b.hold(b.start, b.memIOV(), false)
	}
	if b.lock && !contiguous {
		if err := b.f.Lock(b.start, b.end-b.start, false); err != nil {
			return err
		}
		defer b.f.Unlock(b.start, b.end-b.start)
	}
	w := b.windowBuf()
	n, err := b.f.ReadAt(w, b.start)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for _, p := range b.pieces {
		avail := min(p.n, int64(n)-(p.file-b.start))
		if avail <= 0 {
			return errShort
		}
		copy(b.mem[p.mem:p.mem+avail], w[p.file-b.start:])
		*got += avail
		if avail < p.n {
			return errShort
		}
	}
	return nil
}

// sieveRunBudget bounds the pieces of the file mayWriteSieve walks; past
// it a rank says it may sieve.
const sieveRunBudget = 4096

// mayWriteSieve reports whether writing a through v at off (etypes) could
// read-modify-write a window (data sieving), which other ranks' writes
// into that window must then be locked against. It answers false only
// when sieving is off for writes, when the data is one run of the file,
// or, with automatic sieving, when memory is contiguous and every piece of
// the file is at least sieveMinPiece long (such pieces are moved alone).
func (f *File) mayWriteSieve(v View, a Access, off int64) bool {
	if !f.sieves(true) || a.Size() == 0 {
		return false
	}
	// Beyond one run, these alone mean it may.
	may := f.cfg.ds[1] != hints.Automatic || !a.contiguous()
	fs := v.stream()
	if err := fs.SeekData(off * v.Etype.Size()); err != nil {
		return true
	}
	runs := 0
	end := int64(-1)
	for left, pieces := a.Size(), 0; left > 0; pieces++ {
		fo, n, ok := fs.Next(left)
		if !ok || pieces == sieveRunBudget {
			return true
		}
		if fo != end { // a new run (adjacent blocks of the view join)
			runs++
		}
		may = may || n < sieveMinPiece // a part of a run: conservative
		if may && runs > 1 {
			return true
		}
		end, left = fo+n, left-n
	}
	return false
}
