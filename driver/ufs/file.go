package ufs

import (
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/collio/collio/driver"
	"golang.org/x/sys/unix"
)

// file is an open ufs file. All I/O is positional on the descriptor, so
// there is no shared offset and the methods are safe for concurrent use.
type file struct {
	f    *os.File
	path string
	// fd is f's descriptor. use is held (read-locked) across every call
	// on it, and Close takes it (write-locked) first, so the descriptor is
	// never closed, and its number never reused by the kernel, while a
	// call still uses it. RawConn.Control did the same through a closure
	// that escaped to the heap: an allocation per call.
	fd     int
	use    sync.RWMutex
	closed bool
	// memory: the file is in a memory file system, and the calls that
	// move data are raw ones (memfs.go).
	memory          bool
	pread, pwrite   positional
	preadv, pwritev vectorCall
	// dio is the O_DIRECT side (direct.go), nil unless direct_read or
	// direct_write asked for it and the open succeeded; directErr says
	// why that open failed.
	dio       *direct
	directErr error
	// wrote is set once a write, truncate or allocate through the file
	// returns, and cleared by the fsync that follows; raw once the
	// descriptor was handed out (RawFD), whose writes are not seen here.
	// Sync skips the fsync when neither is set: on NFS and FUSE an fsync
	// is a round trip to the servers even with nothing to send, and adio
	// syncs on every rank after collective writes and at close, also on
	// ranks that wrote nothing.
	wrote, raw atomic.Bool
}

// newFile makes a ufs file of f; magic is the statfs magic of its file
// system when the opener knows it, else 0 and the descriptor is asked.
func newFile(f *os.File, path string, magic uint32) (*file, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	file := &file{f: f, path: path, fd: -1, pread: unix.Pread, pwrite: unix.Pwrite, preadv: unix.Preadv, pwritev: unix.Pwritev}
	if err := raw.Control(func(fd uintptr) { file.fd = int(fd) }); err != nil {
		f.Close()
		return nil, err
	}
	if magic != 0 {
		file.memory = memoryFS(magic)
	} else {
		file.memory = inMemory(file.fd)
	}
	if file.memory {
		file.pread, file.pwrite = rawPositional(unix.SYS_PREAD64), rawPositional(unix.SYS_PWRITE64)
		file.preadv, file.pwritev = rawVectored(unix.SYS_PREADV), rawVectored(unix.SYS_PWRITEV)
	}
	return file, nil
}

// withFD runs fn on the descriptor, which a concurrent Close cannot
// close (and the kernel reuse) while fn is still using it.
func (f *file) withFD(op string, fn func(fd int) error) error {
	f.use.RLock()
	defer f.use.RUnlock()
	if f.closed {
		return &os.PathError{Op: op, Path: f.path, Err: fs.ErrClosed}
	}
	return fn(f.fd)
}

// pathErr wraps an errno with the operation and path; nil stays nil.
func (f *file) pathErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: f.path, Err: err}
}

// retryEINTR repeats a system call that a signal interrupted.
func retryEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// Sync is fsync, skipped when nothing was written through the file since
// the last one (see file.wrote). A write that returns while the fsync
// runs stays noted for the next Sync.
func (f *file) Sync() error {
	if !f.wrote.Swap(false) && !f.raw.Load() {
		return f.withFD("fsync", func(int) error { return nil }) // a closed file still fails
	}
	err := f.withFD("fsync", func(fd int) error {
		return f.pathErr("fsync", retryEINTR(func() error { return fsync(fd) }))
	})
	if err != nil {
		f.wrote.Store(true) // still owed
	}
	return err
}

// fsync is unix.Fsync; tests count the calls.
var fsync = unix.Fsync

// noted returns n and err after marking the file written (file.wrote):
// after the call, so that a Sync running meanwhile leaves the mark set.
func (f *file) noted(n int, err error) (int, error) {
	f.wrote.Store(true)
	return n, err
}

// DropCached drops the page cache's clean pages of the range
// (posix_fadvise POSIX_FADV_DONTNEED): on FUSE and NFS the next read goes
// to the file system's client, and through it to the servers.
func (f *file) DropCached(off, length int64) error {
	return f.withFD("fadvise", func(fd int) error {
		return f.pathErr("fadvise", unix.Fadvise(fd, off, length, unix.FADV_DONTNEED))
	})
}

func (f *file) Truncate(size int64) error {
	if size < 0 {
		return f.pathErr("ftruncate", unix.EINVAL)
	}
	_, err := f.noted(0, f.withFD("ftruncate", func(fd int) error {
		return f.pathErr("ftruncate", retryEINTR(func() error { return unix.Ftruncate(fd, size) }))
	}))
	return err
}

func (f *file) Size() (int64, error) {
	var st unix.Stat_t
	err := f.withFD("fstat", func(fd int) error {
		return f.pathErr("fstat", unix.Fstat(fd, &st))
	})
	if err != nil {
		return 0, err
	}
	return st.Size, nil
}

// Layout reports no striping: one target, unknown start.
func (f *file) Layout() driver.Layout {
	return driver.Layout{StripeSize: 0, StripeCount: 1, StartTarget: -1}
}

func (f *file) Close() error {
	f.use.Lock()
	f.closed = true
	f.use.Unlock()
	derr := f.closeDirect()
	if err := f.f.Close(); err != nil {
		return err
	}
	return derr
}

// onlyFile hides WriteRuns and ReadRuns, so driver's go run by run.
type onlyFile struct{ driver.File }

// RawFD returns the descriptor for callers that move data with their own
// pread and pwrite (libcollio's fast lane in C), and whether they may:
// not with direct I/O on, whose transfers need aligned buffers. The
// descriptor stays valid until Close; callers must stop using it first.
func (f *file) RawFD() (int, bool) {
	f.use.RLock()
	defer f.use.RUnlock()
	f.raw.Store(true) // its writes are not seen here: Sync always syncs
	return f.fd, !f.closed && f.dio == nil
}
