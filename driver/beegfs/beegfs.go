// Package beegfs is the BeeGFS driver, after E10's ad_beegfs: the I/O is
// plain POSIX (a driver/striped base: one descriptor, ioctls on it, then
// a ufs file on it); at create, a requested layout is
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
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/striped"
	"golang.org/x/sys/unix"
)

// Name is the driver's name and path prefix.
const Name = "beegfs"

func init() { driver.Register(New()) }

// New returns the BeeGFS driver.
func New() driver.Driver { return striped.New(Name, &beegfs{ioctl: striped.SysIoctl}) }

// beegfs is the BeeGFS part of the driver: BEEGFS_IOC_MKFILE_STRIPEHINTS
// at create, BEEGFS_IOC_GET_STRIPEINFO on every open. ioctl is the
// kernel's, or a test's.
type beegfs struct{ ioctl striped.Ioctl }

// Prepare: when a layout is requested, the file is first created with the
// stripe hints through its parent directory; if it already exists its
// layout is kept (and O_EXCL fails with EEXIST, as open would).
func (b *beegfs) Prepare(path string, opts driver.OpenOptions) (int, func(fd int) error, error) {
	flags := opts.Flags
	hints, ok := requestFor(opts.Layout, opts.Perm)
	if !ok {
		return flags, nil, nil
	}
	created, err := b.mkfile(path, hints)
	switch {
	case err != nil:
		return 0, nil, err
	case created:
		flags &^= os.O_EXCL // the file is ours
	case flags&os.O_EXCL != 0:
		return 0, nil, &os.PathError{Op: "open", Path: path, Err: unix.EEXIST}
	}
	return flags, nil, nil
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
func (b *beegfs) mkfile(path string, h mkfileHints) (created bool, err error) {
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
	dfd, err := striped.OpenRetry(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)

	name := append([]byte(base), 0)
	var pin runtime.Pinner
	pin.Pin(&name[0])
	defer pin.Unpin()
	err = b.ioctl(dfd, beegfsIocMkfileStripeHints, h.encode(uintptr(unsafe.Pointer(&name[0]))), name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EEXIST):
		return false, nil
	}
	reason := ""
	if errors.Is(err, unix.ENOTTY) {
		reason = "not a BeeGFS file system"
	}
	request := striped.Requested("chunk size", int64(h.chunkSize)) + ", " + striped.Requested("targets", int64(h.numTargets))
	return false, &LayoutError{FS: Name, Op: "mkfile", Path: path, Request: request, Reason: reason, Err: err}
}

// LayoutError reports a failure to create a file with stripe hints or to
// read its stripe info (Op "mkfile" or "get stripe info"). It unwraps to
// the errno.
type LayoutError = striped.LayoutError

// Layout runs BEEGFS_IOC_GET_STRIPEINFO. Not BeeGFS (ENOTTY, when the
// "beegfs:" prefix is used elsewhere) or no pattern (EINVAL) gives an
// unknown layout; other failures are errors.
func (b *beegfs) Layout(fd int, path string) (driver.Layout, error) {
	unknown := driver.Layout{StartTarget: -1}
	buf := make([]byte, sizeStripeInfo)
	err := b.ioctl(fd, beegfsIocGetStripeInfo, buf)
	switch {
	case errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return unknown, nil
	case err != nil:
		return unknown, &LayoutError{FS: Name, Op: "get stripe info", Path: path, Err: err}
	}
	info, err := decodeStripeInfo(buf)
	if err != nil {
		return unknown, &LayoutError{FS: Name, Op: "get stripe info", Path: path, Err: unix.EPROTO, Reason: err.Error()}
	}
	return info.layout(), nil
}
