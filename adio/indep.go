package adio

import (
	"errors"
	"io"
	"sync"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
)

// WriteAt writes a at offset off (in etypes of the view) independently.
// It returns the number of bytes written.
func (f *File) WriteAt(a Access, off int64) (int64, error) {
	if err := f.usable("write_at"); err != nil {
		return 0, err
	}
	return f.writeAt("write_at", f.View(), a, off, false)
}

// ReadAt reads into a from offset off (in etypes of the view)
// independently. It returns the number of bytes read, fewer than a.Size()
// only at end of file.
func (f *File) ReadAt(a Access, off int64) (int64, error) {
	if err := f.usable("read_at"); err != nil {
		return 0, err
	}
	return f.readAt("read_at", f.View(), a, off)
}

// checkTransfer validates an independent transfer before any I/O.
func (f *File) checkTransfer(op string, v View, a Access, off int64, write bool) error {
	switch {
	case write && !f.mode.canWrite():
		return f.errf(ioerr.ErrReadOnly, op, "file was opened read-only")
	case !write && !f.mode.canRead():
		return f.errf(ioerr.ErrAccess, op, "file was opened write-only")
	case off < 0:
		return f.errf(ioerr.ErrArg, op, "offset %d is negative", off)
	}
	if err := a.check(op, f.rank(), v.Etype.Size()); err != nil {
		var e *ioerr.Error
		if errors.As(err, &e) {
			e.Path = f.path
		}
		return err
	}
	pos, ok := dataPos(v, off, a.Size())
	if !ok {
		return f.rangeErr(op, v, off, a.Size())
	}
	if a.Size() > 0 && v.Filetype.Size() == 0 {
		return f.errf(ioerr.ErrArg, op, "the view's filetype selects no data, so %d bytes cannot be transferred", a.Size())
	}
	if end := pos + a.Size(); a.Size() > 0 && v.Filetype.TilesOverlap() && end > v.Filetype.Size() {
		return f.wrap(layout.TileError(v.Filetype, end-1), op)
	}
	return nil
}

// walk calls fn for each run of the transfer that is contiguous in memory
// and in the file, in file order (views are monotonic).
func walk(v View, a Access, off int64, fn func(piece) error) error {
	return walkIn(nil, v, a, off, fn)
}

// walkIn is walk with the file stream from c (nil: a new one).
func walkIn(c *streamCache, v View, a Access, off int64, fn func(piece) error) error {
	fs := c.get(v)
	defer c.put(v, fs)
	if err := fs.SeekData(off * v.Etype.Size()); err != nil {
		return err
	}
	return layout.Zip(a.stream(), fs, a.Size(), func(m, fo, n int64) error {
		return fn(piece{mem: m, file: fo, n: n})
	})
}

// streamCache keeps one stream over a view's tiles between a file's
// calls: building one allocates and lays out the filetype's tree, about
// 0.4 us of a 16 KiB read through a darray view (6% of the call). A
// stream is positioned (SeekData) by each use, so any use may take it.
type streamCache struct {
	mu   sync.Mutex
	ft   *layout.Type
	disp int64
	s    *layout.Stream
}

// get returns a stream over v's tiles: the kept one if it is v's (the
// caller has it until put), else a new one. A nil cache keeps nothing.
func (c *streamCache) get(v View) *layout.Stream {
	if c != nil {
		c.mu.Lock()
		s := c.s
		if s != nil && c.ft == v.Filetype && c.disp == v.Disp {
			c.s = nil
			c.mu.Unlock()
			return s
		}
		c.mu.Unlock()
	}
	return v.stream()
}

// put keeps s, a stream over v's tiles, for the next get.
func (c *streamCache) put(v View, s *layout.Stream) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.ft, c.disp, c.s = v.Filetype, v.Disp, s
	c.mu.Unlock()
}

// fileRange returns the first byte and the end of the file range that a
// transfer of n data bytes at data position pos touches.
func fileRange(v View, pos, n int64) (start, end int64, err error) {
	if ft := v.Filetype; ft.Size() > 0 && ft.IsContiguous() {
		// Tiles back to back: no stream to build, and none could reach
		// as far as a contiguous view's positions do (near 2^63).
		start = v.Disp + ft.LB() + pos
		return start, start + n, nil
	}
	s := v.stream()
	if err = s.SeekData(pos); err != nil {
		return 0, 0, err
	}
	start, _, _ = s.Next(1)
	if err = s.SeekData(pos + n - 1); err != nil {
		return 0, 0, err
	}
	last, _, _ := s.Next(1)
	return start, last + 1, nil
}

// lockAtomic takes the lock that makes a transfer atomic (MPI atomic
// mode): the whole file range it touches. It returns the unlock function.
func (f *File) lockAtomic(v View, a Access, off int64, exclusive bool) (func(), error) {
	start, end, err := fileRange(v, off*v.Etype.Size(), a.Size())
	if err != nil {
		return nil, err
	}
	if err := f.f.Lock(start, end-start, exclusive); err != nil {
		return nil, err
	}
	return func() { f.f.Unlock(start, end-start) }, nil
}

// sieves reports whether independent writes (or reads) may use data
// sieving: romio_ds_write (romio_ds_read) is not disable, and for writes
// the file can be read (not write-only, no E10 cache).
func (f *File) sieves(write bool) bool {
	if write {
		// While nonblocking transfers are in flight on the file, no write
		// may read-modify-write: a window read by one could be written
		// back over the bytes another wrote meanwhile (transfers of
		// disjoint bytes whose windows overlap).
		return f.dsWriteOK && len(f.pending) == 0 && f.cfg.ds[1] != hints.Disable
	}
	return f.cfg.ds[0] != hints.Disable
}

// writeAt writes a at off through view v. alone tells that no other rank
// can touch the file range of this access meanwhile (a collective call
// whose ranks' ranges do not interleave) or that none will sieve (a
// collective call where no rank may read-modify-write): writes then need
// no byte-range locks, and runs go to the driver in batches.
func (f *File) writeAt(op string, v View, a Access, off int64, alone bool) (int64, error) {
	if err := f.checkTransfer(op, v, a, off, true); err != nil {
		return 0, err
	}
	if a.Size() == 0 {
		return 0, nil
	}
	if err := f.settleFor(op, v, a, off); err != nil {
		return 0, err
	}
	if err := f.ensureOpen(op); err != nil {
		return 0, err
	}
	f.mu.Lock()
	atomic := f.atomic
	f.mu.Unlock()
	if atomic {
		unlock, err := f.lockAtomic(v, a, off, true)
		if err != nil {
			return 0, f.wrap(err, op)
		}
		defer unlock()
	}
	// Locks keep other ranks' read-modify-write windows off these bytes;
	// through I/O servers nobody reads, modifies and writes back.
	lock := !atomic && !alone && !f.viaServers
	if fo, ok := oneRunIn(&f.streams, v, a, off); ok {
		return f.writeOneRun(op, a.Buf[:a.Size()], fo, lock)
	}
	b := &batcher{
		f:         f.f,
		mem:       a.Buf,
		sieve:     f.sieves(true),
		autoSieve: f.cfg.ds[1] == hints.Automatic,
		bufSize:   f.cfg.indBufSize[1],
		lock:      lock,
	}
	b.takeScratch()
	defer b.giveScratch()
	err := walkIn(&f.streams, v, a, off, func(p piece) error { return b.add(p, b.flushWrite) })
	if err == nil {
		err = b.finishWrite()
	}
	if err != nil {
		return 0, f.wrap(err, op)
	}
	return a.Size(), nil
}

func (f *File) readAt(op string, v View, a Access, off int64) (int64, error) {
	if err := f.checkTransfer(op, v, a, off, false); err != nil {
		return 0, err
	}
	if a.Size() == 0 {
		return 0, nil
	}
	if err := f.settleFor(op, v, a, off); err != nil {
		return 0, err
	}
	if err := f.ensureOpen(op); err != nil {
		return 0, err
	}
	f.mu.Lock()
	atomic := f.atomic
	f.mu.Unlock()
	if atomic {
		unlock, err := f.lockAtomic(v, a, off, false)
		if err != nil {
			return 0, f.wrap(err, op)
		}
		defer unlock()
	}
	if fo, ok := oneRunIn(&f.streams, v, a, off); ok {
		return f.readOneRun(op, a.Buf[:a.Size()], fo)
	}
	b := &batcher{
		f:         f.f,
		mem:       a.Buf,
		sieve:     f.sieves(false),
		autoSieve: f.cfg.ds[0] == hints.Automatic,
		bufSize:   f.cfg.indBufSize[0],
	}
	if b.autoSieve {
		b.maxHole = sieveMaxReadHole
	}
	b.takeScratch()
	defer b.giveScratch()
	var got int64
	err := walkIn(&f.streams, v, a, off, func(p piece) error { return b.add(p, func() error { return b.flushRead(&got) }) })
	if err == nil {
		err = b.flushRead(&got)
	}
	err = b.finishRead(err, &got)
	if err != nil && !errors.Is(err, errShort) {
		return got, f.wrap(err, op)
	}
	return got, nil
}

// oneRun reports whether an access is one contiguous buffer going to one
// contiguous file range, and where that range starts: contiguous memory
// through a view that puts all of it in one block. Such transfers, the most
// common small ones (IOR, checkpoints of one array per rank), skip the
// piece walk and the batching and make one system call.
func oneRun(v View, a Access, off int64) (fileOff int64, ok bool) {
	return oneRunIn(nil, v, a, off)
}

// oneRunIn is oneRun with the file stream from c (nil: a new one).
func oneRunIn(c *streamCache, v View, a Access, off int64) (fileOff int64, ok bool) {
	if !a.contiguous() || v.Filetype.Size() == 0 {
		return 0, false
	}
	if v.Filetype.IsContiguous() {
		return v.Disp + v.Filetype.LB() + off*v.Etype.Size(), true
	}
	// A view with holes can still place the whole access in one block
	// (a rank's share of each tile of a darray view, written a tile per
	// call): one run as well.
	fs := c.get(v)
	defer c.put(v, fs)
	if fs.SeekData(off*v.Etype.Size()) != nil {
		return 0, false
	}
	fo, n, ok := fs.Next(a.Size())
	return fo, ok && n == a.Size()
}

// writeOneRun writes p at fileOff, under an exclusive lock of its range
// when another rank may read-modify-write there (lock).
func (f *File) writeOneRun(op string, p []byte, fileOff int64, lock bool) (int64, error) {
	if lock {
		if err := f.f.Lock(fileOff, int64(len(p)), true); err != nil {
			return 0, f.wrap(err, op)
		}
		defer f.f.Unlock(fileOff, int64(len(p)))
	}
	if _, err := f.f.WriteAt(p, fileOff); err != nil {
		return 0, f.wrap(err, op)
	}
	return int64(len(p)), nil
}

// readOneRun reads p at fileOff; bytes past end of file read as zeros and
// are not counted, as in the batched path.
func (f *File) readOneRun(op string, p []byte, fileOff int64) (int64, error) {
	n, err := f.f.ReadAt(p, fileOff)
	if errors.Is(err, io.EOF) {
		clear(p[n:])
		err = nil
	}
	if err != nil {
		return int64(n), f.wrap(err, op)
	}
	return int64(n), nil
}
