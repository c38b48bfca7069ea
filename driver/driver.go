// Package driver defines the file-system driver interface that collio's
// I/O paths write through, in the manner of ROMIO's ADIO function table: a
// small surface that each file system implements (ufs, lustre, beegfs, sim)
// and that decorators wrap (faulty for fault injection, the E10 cache).
//
// Offsets and lengths are bytes of the global file. Errors are returned as
// the operating system reported them (wrapped *os.PathError or
// syscall.Errno); the layers above classify them.
package driver

import "os"

// Open flags, a subset of os.O_* that drivers understand.
const (
	ORdOnly = os.O_RDONLY
	OWrOnly = os.O_WRONLY
	ORdWr   = os.O_RDWR
	OCreate = os.O_CREATE
	OExcl   = os.O_EXCL
	OAppend = os.O_APPEND
)

// Layout is how a file is striped over storage targets. Zero values mean
// "not striped / unknown".
type Layout struct {
	StripeSize  int64 // bytes per stripe (striping_unit)
	StripeCount int   // number of targets (striping_factor)
	StartTarget int   // index of the first target (start_iodevice), -1 when unknown
}

// OpenOptions carries what a driver may need at open beyond path and flags.
type OpenOptions struct {
	Flags int         // os.O_* flags (ORdOnly, OCreate, ...)
	Perm  os.FileMode // permission bits for a created file
	// Layout requested at create time (from striping_* hints); zero fields
	// mean "file-system default". Drivers that cannot set layouts ignore it.
	Layout Layout
	// Params are driver-specific settings (for example sim's bandwidth),
	// from hints; keys are hint names.
	Params map[string]string
	// FSMagic is the statfs magic of the file system that holds the file
	// when the caller knows it (FSMagic), else 0: drivers that need it
	// then ask the file system themselves.
	FSMagic uint32
}

// Driver opens and deletes files of one file-system type.
type Driver interface {
	// Name is the driver's name, which is also its path prefix ("ufs").
	Name() string
	Open(path string, opts OpenOptions) (File, error)
	Delete(path string) error
}

// File is an open file. Methods may be called from several goroutines at
// once; positional I/O does not share an offset.
type File interface {
	// ReadAt and WriteAt transfer all of p unless an error occurs (short
	// transfers and EINTR are retried). ReadAt at or past end of file
	// returns io.EOF with the count actually read.
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// WriteV writes the buffers one after another to the contiguous file
	// range starting at off (pwritev); ReadV is its inverse (preadv).
	WriteV(bufs [][]byte, off int64) (int, error)
	ReadV(bufs [][]byte, off int64) (int, error)
	Sync() error
	Truncate(size int64) error
	Size() (int64, error)
	// Allocate reserves space for [off, off+length) so that later writes
	// there cannot fail with ENOSPC (fallocate, or writing zeros into holes
	// where the file system lacks it). It never shrinks the file and never
	// changes existing data.
	Allocate(off, length int64) error
	// Lock takes a byte-range lock on [off, off+length), waiting for
	// conflicting holders; exclusive for writers, shared for readers.
	// length 0 means "to end of file". Unlock releases it.
	Lock(off, length int64, exclusive bool) error
	Unlock(off, length int64) error
	// Layout reports the file's striping as the file system sees it.
	Layout() Layout
	Close() error
}
