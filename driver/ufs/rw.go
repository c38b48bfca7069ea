package ufs

import (
	"io"

	"golang.org/x/sys/unix"
)

// ReadAt reads len(p) bytes at off with pread, retrying short reads and
// EINTR. At end of file it returns the count read and io.EOF.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if f.directOn(false) {
		return f.readDirect("pread", [][]byte{p}, off)
	}
	if off < 0 {
		return 0, f.pathErr("pread", unix.EINVAL)
	}
	done := 0
	err := f.withFD("pread", func(fd int) error {
		for done < len(p) {
			n, err := f.pread(fd, p[done:], off+int64(done))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return f.pathErr("pread", err)
			case n == 0:
				return io.EOF
			}
			done += n
		}
		return nil
	})
	return done, err
}

// WriteAt writes all of p at off with pwrite, retrying short writes and
// EINTR. (On Linux a file opened with O_APPEND ignores off: pwrite appends.)
func (f *file) WriteAt(p []byte, off int64) (int, error) { return f.noted(f.writeAt(p, off)) }

func (f *file) writeAt(p []byte, off int64) (int, error) {
	if f.directOn(true) {
		return f.writeDirect("pwrite", [][]byte{p}, off)
	}
	if off < 0 {
		return 0, f.pathErr("pwrite", unix.EINVAL)
	}
	done := 0
	err := f.withFD("pwrite", func(fd int) error {
		for done < len(p) {
			n, err := f.pwrite(fd, p[done:], off+int64(done))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return f.pathErr("pwrite", err)
			case n == 0:
				// No progress and no errno: stop rather than spin.
				return f.pathErr("pwrite", io.ErrShortWrite)
			}
			done += n
		}
		return nil
	})
	return done, err
}
