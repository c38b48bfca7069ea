// Package striped is the base of the drivers for striped POSIX file
// systems (Lustre, BeeGFS), in the manner of ROMIO's ad_lustre: the I/O is
// plain POSIX through a ufs file, and the file system's own ioctls set
// the striping when the file is created and read it back on every open.
// A driver supplies a Striping (its request numbers, argument structs and
// decoders); this package opens the file once, runs the ioctls on that
// descriptor, and hands the same descriptor to ufs.
package striped

import (
	"os"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"golang.org/x/sys/unix"
)

// defaultPerm is used when OpenOptions.Perm is 0 (as ufs does).
const defaultPerm os.FileMode = 0o644

// Striping is what one striped file system adds to plain POSIX files.
type Striping interface {
	// Prepare runs before the file is opened when the open may create it
	// (O_CREAT). opts.Perm is filled in. It returns the flags to open with
	// (opts.Flags, perhaps with flags of the file system's own or without
	// O_EXCL when it created the file itself) and a step to run on the
	// new descriptor before its layout is read, or nil.
	Prepare(path string, opts driver.OpenOptions) (flags int, apply func(fd int) error, err error)
	// Layout reads the striping of the file open on fd.
	Layout(fd int, path string) (driver.Layout, error)
}

type stripedDriver struct {
	name string
	fs   Striping
	ufs  driver.Driver
}

// New returns a driver named name whose files are ufs files with the
// striping fs sets and reads.
func New(name string, fs Striping) driver.Driver {
	return &stripedDriver{name: name, fs: fs, ufs: ufs.New()}
}

func (d *stripedDriver) Name() string { return d.name }

// Delete removes the file.
func (d *stripedDriver) Delete(path string) error { return d.ufs.Delete(path) }

// Open opens path once: Prepare may create the file or choose extra
// flags, the open does any create and truncate, the Striping's step and
// Layout run on the new descriptor, and the descriptor becomes the ufs
// file that does the I/O.
func (d *stripedDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	if opts.Perm == 0 {
		opts.Perm = defaultPerm
	}
	flags := opts.Flags
	var apply func(fd int) error
	if opts.Flags&os.O_CREATE != 0 {
		var err error
		if flags, apply, err = d.fs.Prepare(path, opts); err != nil {
			return nil, err
		}
	}
	fd, err := OpenRetry(path, flags|unix.O_CLOEXEC, uint32(opts.Perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	layout, err := d.layoutOf(fd, path, apply)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	f, err := ufs.FromFD(fd, path, opts)
	if err != nil {
		return nil, err
	}
	return &file{File: f, layout: layout}, nil
}

// layoutOf runs apply and then Layout on fd, which must be a regular file
// (an ioctl on a directory means something else, or nothing).
func (d *stripedDriver) layoutOf(fd int, path string, apply func(fd int) error) (driver.Layout, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return driver.Layout{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return driver.Layout{}, &os.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	}
	if apply != nil {
		if err := apply(fd); err != nil {
			return driver.Layout{}, err
		}
	}
	return d.fs.Layout(fd, path)
}

// sysOpen is open(2); tests replace it to count opens and interrupt them.
var sysOpen = unix.Open

// OpenRetry is open(2), repeated when a signal interrupts it.
func OpenRetry(path string, flags int, perm uint32) (int, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = sysOpen(path, flags, perm)
		return err
	})
	return fd, err
}

// file is a ufs file that reports the layout read when it was opened.
type file struct {
	driver.File
	layout driver.Layout
}

func (f *file) Layout() driver.Layout { return f.layout }

// Unwrap returns the ufs file underneath (driver.DirectOf looks through it).
func (f *file) Unwrap() driver.File { return f.File }

// WriteRuns batches through the ufs file underneath (driver.RunWriter).
func (f *file) WriteRuns(runs []driver.Run) (int64, error) { return driver.WriteRuns(f.File, runs) }

// ReadRuns batches through the ufs file underneath (driver.RunReader).
func (f *file) ReadRuns(runs []driver.Run) (int64, error) { return driver.ReadRuns(f.File, runs) }
