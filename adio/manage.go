package adio

import (
	"errors"
	"fmt"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/stack"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Sync flushes every rank's writes to storage (collective). With the E10
// cache the driver file's Sync first waits for the copies to the global
// file; a copy error on any rank is every rank's error.
func (f *File) Sync() error {
	if err := f.usable("sync"); err != nil {
		return err
	}
	var err error
	if f.mode.canWrite() && f.f != nil {
		err = f.f.Sync()
	}
	if err := f.agree("sync", err); err != nil {
		return err
	}
	// Every rank's data reached the servers: later reads on this node
	// must ask them. A failure here is this rank's alone.
	return f.wrap(f.dropNodeCache(0, 0), "sync")
}

// Size returns the file size in bytes.
func (f *File) Size() (int64, error) {
	if err := f.usable("get_size"); err != nil {
		return 0, err
	}
	n, err := f.sizeShared()
	return n, f.wrap(err, "get_size")
}

// SetSize truncates or extends the file to size bytes (collective; every
// rank must pass the same size).
func (f *File) SetSize(size int64) error {
	return f.rootSizeOp("set_size", size, func() error { return f.f.Truncate(size) })
}

// Preallocate makes sure the first size bytes of the file have storage
// reserved, extending the file if it is shorter (collective; every rank must
// pass the same size).
func (f *File) Preallocate(size int64) error {
	return f.rootSizeOp("preallocate", size, func() error {
		if size == 0 {
			return nil
		}
		return f.f.Allocate(0, size)
	})
}

// rootSizeOp checks size, checks that every rank passed the same one, and
// has rank 0 apply op: one rank changing the size avoids racing truncates.
func (f *File) rootSizeOp(op string, size int64, apply func() error) error {
	if err := f.usable(op); err != nil {
		return err
	}
	var err error
	switch {
	case size < 0:
		err = f.errf(ioerr.ErrArg, op, "size %d is negative", size)
	case !f.mode.canWrite():
		err = f.errf(ioerr.ErrReadOnly, op, "file was opened read-only")
	}
	if err := f.agree(op, err); err != nil {
		return err
	}
	if err := f.checkSame(op, size, "size"); err != nil {
		return err
	}
	if f.cached && op == "set_size" {
		// Copies still queued in any rank's cache would land after the
		// size change: every rank finishes them first.
		if wb, ok := f.writeBack(); ok {
			wb.Drain()
		}
		if err := f.agree(op, nil); err != nil {
			return err
		}
	}
	if f.nodeCaches && op == "set_size" {
		// Writes a node's client still holds (GlusterFS's write-behind)
		// would land after the truncation and extend the file again.
		if err := f.agree(op, f.flushNodeCache()); err != nil {
			return err
		}
	}
	err = nil
	if f.rank() == 0 {
		if err = f.ensureOpen(op); err == nil {
			err = apply()
		}
	} else if wb, ok := f.writeBack(); ok && op == "set_size" {
		// Rank 0's cache forgets its failed copies past the new end as it
		// truncates; the other ranks' caches must too, or a retry at close
		// grows the file back with the old bytes.
		err = wb.DropPast(size)
	}
	return f.agree(op, err)
}

// checkSame returns ErrNotSame on every rank if ranks passed different values.
func (f *File) checkSame(op string, v int64, what string) error {
	out := make([]int64, 2)
	if err := f.comm.AllreduceInt64([]int64{v, -v}, out, comm.OpMax); err != nil {
		return f.wrap(err, op)
	}
	if out[0] != -out[1] {
		return &ioerr.Error{Class: ioerr.ErrNotSame, Op: op, Path: f.path, Rank: -1,
			Msg: fmt.Sprintf("ranks passed different %s values (from %d to %d)", what, -out[1], out[0])}
	}
	return nil
}

// SetAtomicity turns MPI atomic mode on or off (collective). In atomic
// mode each independent transfer holds a byte-range lock over the file
// range it touches, so concurrent conflicting accesses are serialised.
func (f *File) SetAtomicity(on bool) error {
	if err := f.usable("set_atomicity"); err != nil {
		return err
	}
	v := int64(0)
	if on {
		v = 1
	}
	// A synchronizing call: errors owed by unagreed transfers come out here.
	if err := f.agree("set_atomicity", nil); err != nil {
		return err
	}
	if err := f.checkSame("set_atomicity", v, "atomicity"); err != nil {
		return err
	}
	if on && f.viaServers {
		return f.errf(ioerr.ErrUnsupported, "set_atomicity", "atomic mode is not available on a file opened through I/O servers (SplitIOServers)")
	}
	f.mu.Lock()
	f.atomic = on
	f.learned.forget()
	f.mu.Unlock()
	return nil
}

// Atomicity reports whether atomic mode is on.
func (f *File) Atomicity() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.atomic
}

// Close closes the file on every rank (collective). With
// ModeDeleteOnClose, rank 0 deletes the file once every rank has closed it.
// With the E10 cache the driver file's Close copies what the cache holds
// first (in the background with e10_cache_deferred_close: the next open
// of the path, and cache.WaitAll at finalisation, report that outcome).
func (f *File) Close() error {
	if f != nil && !f.closed && f.broken != nil {
		// The peers may be stuck in the failed call: close locally only.
		// The exchange buffers stay mapped: MPI may still write into
		// those of the call that never completed.
		f.closed = true
		f.closeDriverFile()
		f.stopRecording()
		return f.errf(ioerr.ErrBadFile, "close", "closed locally after an earlier collective call failed: %v", f.broken)
	}
	if err := f.usable("close"); err != nil {
		return err
	}
	// Operations not waited for still use the file: they complete (each
	// progresses on its own), and the close fails on every rank naming
	// them, with the file closed.
	left := f.finishOutstanding()
	// This rank's background sync must end before its file does, and
	// every rank's before the close's agreement: a failure is its error.
	if err := f.settle("close"); err != nil && left == nil {
		left = err
	}
	if err := f.publicationFailed("close"); err != nil && left == nil {
		left = err // every rank settled by now and saw the failure
	}
	f.closed = true
	f.stopRecording()
	serr := f.publishClose()
	cerr := errors.Join(serr, f.closeDriverFile())
	f.buffers.Release() // after the driver let go of any window it held
	if left == nil {
		left = cerr
	}
	err := f.agree("close", left)
	if f.broken != nil {
		// The others were in another call, or never came: nothing more
		// is done together, and the private communicator is not reused.
		return err
	}
	if err == nil && f.mode&ModeDeleteOnClose != 0 {
		var derr error
		if f.rank() == 0 {
			derr = f.stack.Delete()
		}
		err = f.agree("close", derr)
	}
	f.keepMeasured() // every rank comes here after the same agreements
	if ferr := f.freeSlots(); err == nil && ferr != nil {
		err = f.wrap(ferr, "close")
	}
	if ferr := f.leaveComm(); err == nil && ferr != nil {
		err = f.wrap(ferr, "close")
	}
	return err
}

// Delete removes a file (independent, like MPI_File_delete).
func Delete(path string) error {
	// A deferred close of this file (e10_cache_deferred_close) may still be
	// copying into it: let it finish first, so nothing writes the file
	// once it is gone. Its copy errors concern data being deleted, and a
	// failed copy's journal is skipped by collio recover (the file is gone).
	stack.WaitDeferredCloses(path)
	drv, p, err := driver.Resolve(path)
	if err != nil {
		return ioerr.Wrap(err, "delete", path, -1)
	}
	if err := drv.Delete(p); err != nil {
		if ioerr.ClassOf(err) == ioerr.ErrNotFound {
			return &ioerr.Error{Class: ioerr.ErrNotFound, Op: "delete", Path: path, Rank: -1, Err: err, Msg: "file does not exist"}
		}
		return ioerr.Wrap(err, "delete", path, -1)
	}
	return nil
}
