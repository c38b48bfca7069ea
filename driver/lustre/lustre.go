// Package lustre is the Lustre driver, in the manner of ROMIO's ad_lustre:
// the I/O itself is plain POSIX (a driver/striped base: one descriptor,
// ioctls on it, then a ufs file on it), but at create
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
	"github.com/collio/collio/driver/striped"
	"golang.org/x/sys/unix"
)

// Name is the driver's name and path prefix.
const Name = "lustre"

// PoolParam is the hint (driver parameter) naming an OST pool for files
// this driver creates with a layout; empty or absent means no pool.
const PoolParam = "collio_lustre_pool"

const (
	maxStripeSize = 1<<32 - lovMinStripeSize // largest multiple of 64 KiB in a __u32
)

func init() { driver.Register(New()) }

// New returns the Lustre driver.
func New() driver.Driver { return striped.New(Name, &lustre{ioctl: striped.SysIoctl}) }

// lustre is the Lustre part of the driver: LL_IOC_LOV_SETSTRIPE at create,
// LL_IOC_LOV_GETSTRIPE on every open. ioctl is the kernel's, or a test's.
type lustre struct{ ioctl striped.Ioctl }

// Prepare: when a layout is requested, the file is opened with
// O_LOV_DELAY_CREATE and, on that descriptor, the layout is set by
// LL_IOC_LOV_SETSTRIPE; if the file already had a layout (EEXIST) that
// layout is kept. The same descriptor then does the I/O, as in ROMIO's
// ad_lustre_open (open(2) does not arm signal-driven I/O for O_ASYNC, and
// O_NOCTTY matters for terminals only). A request that cannot be
// expressed fails before the open, so nothing is created.
func (l *lustre) Prepare(path string, opts driver.OpenOptions) (int, func(fd int) error, error) {
	req, err := requestFor(path, opts)
	if err != nil || req == nil {
		return opts.Flags, nil, err
	}
	apply := func(fd int) error {
		err := l.setLayout(fd, path, *req)
		if err != nil && opts.Flags&os.O_EXCL != 0 {
			unix.Unlink(path) // we created it; leave nothing half-made
		}
		return err
	}
	return opts.Flags | oLovDelayCreate, apply, nil
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
			return nil, layoutError("setstripe", path, describe(l, pool), unix.EINVAL,
				fmt.Sprintf("start_iodevice %d is not a possible OST index (max %d)", l.StartTarget, lovV1InsaneStripeIndex))
		}
		s.stripeOffset = uint16(l.StartTarget)
	}
	if len(pool) > lovMaxPoolName {
		return nil, layoutError("setstripe", path, describe(l, pool), unix.EINVAL,
			fmt.Sprintf("pool name %q is longer than %d bytes", pool, lovMaxPoolName))
	}
	return s, nil
}

// setLayout runs LL_IOC_LOV_SETSTRIPE. EEXIST means the file already had a
// layout (it existed before this open), which is kept.
func (l *lustre) setLayout(fd int, path string, s setstripe) error {
	err := l.ioctl(fd, llIocLovSetstripe, s.encode())
	if err == nil || errors.Is(err, unix.EEXIST) {
		return nil
	}
	reason := ""
	if errors.Is(err, unix.ENOTTY) {
		reason = "not a Lustre file system"
	}
	return layoutError("setstripe", path, describe(s.layout(), s.pool), err, reason)
}

// Layout runs LL_IOC_LOV_GETSTRIPE. A file without a layout (ENODATA)
// or not on Lustre (ENOTTY, as when the "lustre:" prefix is used
// elsewhere) has an unknown layout; other failures are errors.
func (l *lustre) Layout(fd int, path string) (driver.Layout, error) {
	unknown := driver.Layout{StartTarget: -1}
	buf := getstripeBuffer()
	err := l.ioctl(fd, llIocLovGetstripe, buf)
	switch {
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.ENOTTY), errors.Is(err, unix.EOPNOTSUPP):
		return unknown, nil
	case err != nil:
		return unknown, layoutError("getstripe", path, "", err, "")
	}
	layout, err := decodeLayout(buf)
	if err != nil {
		return unknown, layoutError("getstripe", path, "", unix.EPROTO, err.Error())
	}
	return layout, nil
}

// layout is the request as a driver.Layout, for messages.
func (s setstripe) layout() driver.Layout {
	l := driver.Layout{StripeSize: int64(s.stripeSize), StripeCount: int(s.stripeCount), StartTarget: -1}
	if s.stripeOffset != lovOffsetDefault {
		l.StartTarget = int(s.stripeOffset)
	}
	return l
}

// LayoutError reports a failure to set or read a file's striping
// (Op "setstripe" or "getstripe"). It unwraps to the errno.
type LayoutError = striped.LayoutError

func layoutError(op, path, request string, err error, reason string) *LayoutError {
	return &LayoutError{FS: Name, Op: op, Path: path, Request: request, Reason: reason, Err: err}
}

// describe says what a setstripe request asks, for LayoutError.Request.
func describe(l driver.Layout, pool string) string {
	s := striped.Requested("stripe size", l.StripeSize) + ", " + striped.Requested("stripe count", int64(l.StripeCount)) + ", "
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
