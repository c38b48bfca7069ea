// Package ufs is the Unix file-system driver: plain POSIX files on any
// local or network file system without a driver of its own, like ROMIO's
// ad_ufs. Importing it registers the driver under the name "ufs".
//
// It is Linux-specific: byte-range locks are open-file-description locks
// (F_OFD_SETLKW) so that ranks running as goroutines of one process, each
// with its own open file, really exclude each other.
package ufs

import (
	"os"
	"syscall"

	"github.com/collio/collio/driver"
)

// Name is the driver's name and path prefix.
const Name = "ufs"

// defaultPerm is used when OpenOptions.Perm is 0.
const defaultPerm os.FileMode = 0o644

func init() { driver.Register(New()) }

type ufsDriver struct{}

// New returns the ufs driver. It is stateless; every call returns an
// equivalent value.
func New() driver.Driver { return ufsDriver{} }

func (ufsDriver) Name() string { return Name }

// Open opens path with opts.Flags and opts.Perm. Layout is ignored: a
// plain file system has no striping to set. Of Params, only direct_read
// and direct_write are read (direct.go). Errors are *os.PathError with
// the errno inside.
func (ufsDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	perm := opts.Perm
	if perm == 0 {
		perm = defaultPerm
	}
	f, err := os.OpenFile(path, opts.Flags, perm)
	if err != nil {
		return nil, err
	}
	return fromFile(f, path, opts)
}

// FromFD makes a ufs file of a descriptor that the caller opened on path
// with opts.Flags, so that a driver which needs the descriptor itself
// (the striped file systems run their ioctls on it) does its I/O through
// ufs without opening the file a second time. The file takes fd over: it
// closes fd when it is closed, or at once when FromFD fails. Of
// opts.Params, direct_read and direct_write are read, as by Open.
func FromFD(fd int, path string, opts driver.OpenOptions) (driver.File, error) {
	return fromFile(os.NewFile(uintptr(fd), path), path, opts)
}

// fromFile makes a ufs file of f, which it owns from then on.
func fromFile(f *os.File, path string, opts driver.OpenOptions) (driver.File, error) {
	// open(2) accepts a directory read-only; MPI files are regular files,
	// so fail here rather than on the first read.
	if info, err := f.Stat(); err != nil {
		f.Close()
		return nil, err
	} else if info.IsDir() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	}
	file, err := newFile(f, path, opts.FSMagic)
	if err != nil {
		return nil, err
	}
	file.setupDirect(path, opts)
	return file, nil
}

// Delete removes the file.
func (ufsDriver) Delete(path string) error { return os.Remove(path) }
