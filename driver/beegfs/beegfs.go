// Package beegfs is the BeeGFS driver, after E10's ad_beegfs: the I/O is
// plain POSIX (it wraps the ufs driver); at create, a requested layout is
// applied by creating the file through its parent directory with
// BEEGFS_IOC_MKFILE_STRIPEHINTS (chunk size and number of targets), and on
// every open the file's striping is read with BEEGFS_IOC_GET_STRIPEINFO
// and reported by File.Layout.
//
// Importing the package registers the driver as "beegfs": it serves paths
// written "beegfs:/path" and paths that statfs says are on BeeGFS.
//
// Requested values are adjusted to what the client accepts rather than
// refused (hints are advisory; the real layout is read back): the chunk
// size (striping_unit) is rounded up to a power of two of at least 64 KiB
// and capped at 2 GiB; the number of targets (striping_factor) is capped
// at 65535. start_iodevice has no equivalent in this interface and is
// ignored. Zero fields mean "directory default".
package beegfs

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"golang.org/x/sys/unix"
)

// Name is the driver's name and path prefix.
const Name = "beegfs"

const defaultPerm os.FileMode = 0o644

func init() { driver.Register(New()) }

type beegfsDriver struct {
	ioctl ioctlFunc
	posix driver.Driver
}

// New returns the BeeGFS driver.
func New() driver.Driver { return newDriver(sysIoctl) }

func newDriver(ioctl ioctlFunc) *beegfsDriver {
	return &beegfsDriver{ioctl: ioctl, posix: ufs.New()}
}

func (*beegfsDriver) Name() string { return Name }

// Delete removes the file.
func (d *beegfsDriver) Delete(path string) error { return d.posix.Delete(path) }

type file struct {
	driver.File
	layout driver.Layout
}

func (f *file) Layout() driver.Layout { return f.layout }

// Unwrap returns the ufs file underneath (driver.DirectOf looks through it).
func (f *file) Unwrap() driver.File { return f.File }

// WriteRuns batches through the posix file underneath (driver.RunWriter).
func (f *file) WriteRuns(runs []driver.Run) (int64, error) { return driver.WriteRuns(f.File, runs) }

// ReadRuns batches through the posix file underneath (driver.RunReader).
func (f *file) ReadRuns(runs []driver.Run) (int64, error) { return driver.ReadRuns(f.File, runs) }

// Open opens path. When it may create the file and a layout is requested,
// the file is first created with the stripe hints through its parent
// directory; if it already exists its layout is kept (and O_EXCL fails
// with EEXIST, as open would). Then the stripe info is read on a
// descriptor of Open's own (the ufs file does not expose its descriptor),
// and the I/O descriptor is opened through ufs.
func (d *beegfsDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	perm := opts.Perm
	if perm == 0 {
		perm = defaultPerm
	}
	flags := opts.Flags
	if hints, ok := requestFor(opts.Layout, perm); ok && flags&os.O_CREATE != 0 {
		created, err := d.mkfile(path, hints)
		if err != nil {
			return nil, err
		}
		switch {
		case created:
			flags &^= os.O_EXCL // the file is ours
		case flags&os.O_EXCL != 0:
			return nil, &os.PathError{Op: "open", Path: path, Err: unix.EEXIST}
		}
	}
	fd, err := openRetry(path, (flags&^os.O_APPEND)|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, &os.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	}
	layout, err := d.getLayout(fd, path)
	if err != nil {
		return nil, err
	}
	popts := opts
	popts.Flags = flags &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC)
	popts.Perm = perm
	pf, err := d.posix.Open(path, popts)
	if err != nil {
		return nil, err
	}
	return &file{File: pf, layout: layout}, nil
}

func openRetry(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// requestFor turns the requested layout into stripe hints; ok is false
// when neither chunk size nor target count is requested.
func requestFor(l driver.Layout, perm os.FileMode) (mkfileHints, bool) {
	if l.StripeSize <= 0 && l.StripeCount <= 0 {
		return mkfileHints{}, false
	}
	h := mkfileHints{mode: uint32(perm.Perm())}
	if l.StripeSize > 0 {
		h.chunkSize = uint32(chunkSizeFor(l.StripeSize))
	}
	if l.StripeCount > 0 {
		h.numTargets = uint32(min(l.StripeCount, maxNumTargets))
	}
	return h, true
}

// chunkSizeFor rounds size up to a power of two in [64 KiB, 2 GiB].
func chunkSizeFor(size int64) int64 {
	if size <= minChunkSize {
		return minChunkSize
	}
	if size >= maxChunkSize {
		return maxChunkSize
	}
	return 1 << bits.Len64(uint64(size-1))
}

// mkfile creates path with the stripe hints through its parent directory.
// created is false when the file already existed.
func (d *beegfsDriver) mkfile(path string, h mkfileHints) (created bool, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." {
		return false, &os.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	}
	if len(base)+1 > filenameMaxLen {
		return false, &os.PathError{Op: "open", Path: path, Err: unix.ENAMETOOLONG}
	}
	dfd, err := openRetry(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)

	name := append([]byte(base), 0)
	var pin runtime.Pinner
	pin.Pin(&name[0])
	defer pin.Unpin()
	err = d.ioctl(dfd, beegfsIocMkfileStripeHints, h.encode(uintptr(unsafe.Pointer(&name[0]))), name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, nil
	}
	le := &LayoutError{Path: path, Op: "mkfile", ChunkSize: h.chunkSize, NumTargets: h.numTargets, Err: err}
	if errors.Is(err, unix.ENOTTY) {
		le.Reason = "not a BeeGFS file system"
	}
	return false, le
}

// getLayout runs BEEGFS_IOC_GET_STRIPEINFO. Not BeeGFS (ENOTTY, when the
// "beegfs:" prefix is used elsewhere) or no pattern (EINVAL) gives an
// unknown layout; other failures are errors.
func (d *beegfsDriver) getLayout(fd int, path string) (driver.Layout, error) {
	buf := make([]byte, sizeStripeInfo)
	err := d.ioctl(fd, beegfsIocGetStripeInfo, buf)
	switch {
	case errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return driver.Layout{StartTarget: -1}, nil
	case err != nil:
		return driver.Layout{StartTarget: -1}, &LayoutError{Path: path, Op: "get stripe info", Err: err}
	}
	info, err := decodeStripeInfo(buf)
	if err != nil {
		return driver.Layout{StartTarget: -1}, &LayoutError{Path: path, Op: "get stripe info", Err: unix.EPROTO, Reason: err.Error()}
	}
	return info.layout(), nil
}

// LayoutError reports a failure to create a file with stripe hints or to
// read its stripe info. It unwraps to the errno.
type LayoutError struct {
	Path string
	Op   string // "mkfile" or "get stripe info"
	// For mkfile: what was asked (after rounding); 0 = directory default.
	ChunkSize, NumTargets uint32
	Reason                string
	Err                   error
}

func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("beegfs %s %s", e.Op, e.Path)
	if e.Op == "mkfile" {
		part := func(name string, v uint32) string {
			if v == 0 {
				return name + " default"
			}
			return fmt.Sprintf("%s %d", name, v)
		}
		msg += " (" + part("chunk size", e.ChunkSize) + ", " + part("targets", e.NumTargets) + ")"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + ": " + e.Err.Error()
}

func (e *LayoutError) Unwrap() error { return e.Err }
