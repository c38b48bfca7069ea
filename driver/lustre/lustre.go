// Package lustre is the Lustre driver, in the manner of ROMIO's ad_lustre:
// the I/O itself is plain POSIX (it wraps the ufs driver), but at create
// the striping asked for through the striping_unit, striping_factor and
// start_iodevice hints is set with LL_IOC_LOV_SETSTRIPE on a file opened
// with O_LOV_DELAY_CREATE, and on every open the actual striping is read
// with LL_IOC_LOV_GETSTRIPE and reported by File.Layout, so that the
// collective layers can align file domains to stripes.
//
// Importing the package registers the driver as "lustre": it serves paths
// written "lustre:/path" and paths that statfs says are on Lustre.
//
// Requested layouts are adjusted to what the kernel accepts, not refused:
// the stripe size is rounded up to a multiple of 64 KiB (LOV_MIN_STRIPE_SIZE)
// and capped at 4 GiB - 64 KiB, the stripe count is capped at 2000
// (LOV_MAX_STRIPE_COUNT). Hints are advisory in MPI, and the layout the
// file really got is read back and reported. A start target that cannot be
// an OST index, or a pool name longer than 15 bytes, is an error.
//
// Zero fields of the requested driver.Layout mean "file-system default"
// (driver.OpenOptions' rule); so does a negative StartTarget. This means
// start_iodevice=0 cannot be asked for explicitly; Lustre's allocator
// picks the first OST then.
package lustre

import (
	"errors"
	"fmt"
	"os"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"golang.org/x/sys/unix"
)

// Name is the driver's name and path prefix.
const Name = "lustre"

// PoolParam is the hint (driver parameter) naming an OST pool for files
// this driver creates with a layout; empty or absent means no pool.
const PoolParam = "collio_lustre_pool"

// defaultPerm is used when OpenOptions.Perm is 0 (as ufs does).
const defaultPerm os.FileMode = 0o644

const (
	maxStripeSize = 1<<32 - lovMinStripeSize // largest multiple of 64 KiB in a __u32
)

func init() { driver.Register(New()) }

type lustreDriver struct {
	ioctl ioctlFunc
	posix driver.Driver
}

// New returns the Lustre driver.
func New() driver.Driver { return newDriver(sysIoctl) }

func newDriver(ioctl ioctlFunc) *lustreDriver {
	return &lustreDriver{ioctl: ioctl, posix: ufs.New()}
}

func (*lustreDriver) Name() string { return Name }

// Delete removes the file.
func (d *lustreDriver) Delete(path string) error { return d.posix.Delete(path) }

// file is a ufs file that reports the Lustre layout it was opened with.
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

// Open opens path. When it may create the file (O_CREAT) and a layout is
// requested, the file is created with O_LOV_DELAY_CREATE and the layout set
// by LL_IOC_LOV_SETSTRIPE; if the file already had a layout (EEXIST) that
// layout is kept. Then the layout is read back.
//
// The ioctls need a descriptor, which the ufs file does not expose, so Open
// first opens path itself (doing any create and truncate), runs the ioctls
// on that descriptor, then opens the I/O descriptor through ufs without
// O_CREAT, O_EXCL and O_TRUNC, and closes its own. (A consequence: a file
// created write-only with a mode that forbids writing cannot be reopened
// for writing; MPI-IO creates files 0644.)
func (d *lustreDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	creating := opts.Flags&os.O_CREATE != 0
	var req *setstripe
	if creating {
		var err error
		if req, err = requestFor(path, opts); err != nil {
			return nil, err
		}
	}
	perm := opts.Perm
	if perm == 0 {
		perm = defaultPerm
	}
	flags := (opts.Flags &^ os.O_APPEND) | unix.O_CLOEXEC
	if req != nil {
		flags |= oLovDelayCreate
	}
	fd, err := openRetry(path, flags, uint32(perm.Perm()))
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
	if req != nil {
		if err := d.setLayout(fd, path, *req); err != nil {
			if opts.Flags&os.O_EXCL != 0 {
				unix.Unlink(path) // we created it; leave nothing half-made
			}
			return nil, err
		}
	}
	layout, err := d.getLayout(fd, path)
	if err != nil {
		return nil, err
	}
	popts := opts
	popts.Flags = opts.Flags &^ (os.O_CREATE | os.O_EXCL | os.O_TRUNC)
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

// requestFor turns the requested layout into a setstripe request: nil when
// nothing is requested, an error when a value cannot be expressed.
func requestFor(path string, opts driver.OpenOptions) (*setstripe, error) {
	l := opts.Layout
	pool := opts.Params[PoolParam]
	if l.StripeSize <= 0 && l.StripeCount <= 0 && l.StartTarget <= 0 && pool == "" {
		return nil, nil
	}
	s := &setstripe{stripeOffset: lovOffsetDefault, pool: pool}
	if l.StripeSize > 0 {
		size := (l.StripeSize + lovMinStripeSize - 1) / lovMinStripeSize * lovMinStripeSize
		s.stripeSize = uint32(min(size, maxStripeSize))
	}
	if l.StripeCount > 0 {
		s.stripeCount = uint16(min(l.StripeCount, lovMaxStripeCount))
	}
	if l.StartTarget > 0 {
		if l.StartTarget > lovV1InsaneStripeIndex {
			return nil, &LayoutError{Path: path, Op: "setstripe", Requested: l, Pool: pool, Err: unix.EINVAL,
				Reason: fmt.Sprintf("start_iodevice %d is not a possible OST index (max %d)", l.StartTarget, lovV1InsaneStripeIndex)}
		}
		s.stripeOffset = uint16(l.StartTarget)
	}
	if len(pool) > lovMaxPoolName {
		return nil, &LayoutError{Path: path, Op: "setstripe", Requested: l, Pool: pool, Err: unix.EINVAL,
			Reason: fmt.Sprintf("pool name %q is longer than %d bytes", pool, lovMaxPoolName)}
	}
	return s, nil
}

// setLayout runs LL_IOC_LOV_SETSTRIPE. EEXIST means the file already had a
// layout (it existed before this open), which is kept.
func (d *lustreDriver) setLayout(fd int, path string, s setstripe) error {
	err := d.ioctl(fd, llIocLovSetstripe, s.encode())
	if err == nil || errors.Is(err, unix.EEXIST) {
		return nil
	}
	le := &LayoutError{Path: path, Op: "setstripe", Requested: s.layout(), Pool: s.pool, Err: err}
	if errors.Is(err, unix.ENOTTY) {
		le.Reason = "not a Lustre file system"
	}
	return le
}

// getLayout runs LL_IOC_LOV_GETSTRIPE. A file without a layout (ENODATA)
// or not on Lustre (ENOTTY, as when the "lustre:" prefix is used
// elsewhere) has an unknown layout; other failures are errors.
func (d *lustreDriver) getLayout(fd int, path string) (driver.Layout, error) {
	unknown := driver.Layout{StartTarget: -1}
	buf := getstripeBuffer()
	err := d.ioctl(fd, llIocLovGetstripe, buf)
	switch {
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EOPNOTSUPP):
		return unknown, nil
	case err != nil:
		return unknown, &LayoutError{Path: path, Op: "getstripe", Err: err}
	}
	l, err := decodeLayout(buf)
	if err != nil {
		return unknown, &LayoutError{Path: path, Op: "getstripe", Err: unix.EPROTO, Reason: err.Error()}
	}
	return l, nil
}

// layout is the request as a driver.Layout, for messages.
func (s setstripe) layout() driver.Layout {
	l := driver.Layout{StripeSize: int64(s.stripeSize), StripeCount: int(s.stripeCount), StartTarget: -1}
	if s.stripeOffset != lovOffsetDefault {
		l.StartTarget = int(s.stripeOffset)
	}
	return l
}

// LayoutError reports a failure to set or read a file's striping. It
// unwraps to the errno.
type LayoutError struct {
	Path      string
	Op        string        // "setstripe" or "getstripe"
	Requested driver.Layout // for setstripe: the layout asked for (after rounding)
	Pool      string
	Reason    string // extra explanation, may be empty
	Err       error
}

func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("lustre %s %s", e.Op, e.Path)
	if e.Op == "setstripe" {
		msg += " (" + describe(e.Requested, e.Pool) + ")"
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg + ": " + e.Err.Error()
}

func (e *LayoutError) Unwrap() error { return e.Err }

func describe(l driver.Layout, pool string) string {
	part := func(name string, v int64) string {
		if v <= 0 {
			return name + " default"
		}
		return fmt.Sprintf("%s %d", name, v)
	}
	s := part("stripe size", l.StripeSize) + ", " + part("stripe count", int64(l.StripeCount)) + ", "
	if l.StartTarget < 0 {
		s += "start OST default"
	} else {
		s += fmt.Sprintf("start OST %d", l.StartTarget)
	}
	if pool != "" {
		s += ", pool " + pool
	}
	return s
}
