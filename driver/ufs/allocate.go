package ufs

import (
	"io"

	"golang.org/x/sys/unix"
)

// allocChunk is how much the fallback reads and writes back at a time.
const allocChunk = 1 << 20

// fallocate is unix.Fallocate; tests replace it to force the fallback.
var fallocate = unix.Fallocate

// Allocate makes sure [off, off+length) has blocks behind it and that the
// file is at least off+length long (MPI_File_preallocate). Existing data
// is unchanged and the file never shrinks.
func (f *file) Allocate(off, length int64) error {
	defer f.wrote.Store(true)
	if off < 0 || length < 0 || off > maxInt64-length {
		return f.pathErr("fallocate", unix.EINVAL)
	}
	if length == 0 {
		return nil // fallocate rejects a zero length; nothing to reserve
	}
	var err error
	werr := f.withFD("fallocate", func(fd int) error {
		err = retryEINTR(func() error { return fallocate(fd, 0, off, length) })
		return nil
	})
	if werr != nil {
		return werr
	}
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS {
		return f.allocateByWriting(off, length)
	}
	return f.pathErr("fallocate", err)
}

const maxInt64 = 1<<63 - 1

// allocateByWriting is the fallback for file systems without fallocate:
// inside the current size each chunk is read and written back (filling
// holes without changing data), beyond it zeros are written. Like ROMIO's
// generic preallocate it is not atomic against concurrent writers; the
// caller (MPI_File_preallocate is collective) runs it on one rank.
func (f *file) allocateByWriting(off, length int64) error {
	size, err := f.Size()
	if err != nil {
		return err
	}
	end := off + length
	buf := make([]byte, min(int64(allocChunk), length))
	for pos := off; pos < min(end, size); {
		chunk := buf[:min(int64(len(buf)), min(end, size)-pos)]
		n, err := f.ReadAt(chunk, pos)
		if err != nil && err != io.EOF {
			return err
		}
		if n > 0 {
			if _, err := f.WriteAt(chunk[:n], pos); err != nil {
				return err
			}
		}
		if n < len(chunk) {
			break // the file shrank meanwhile; the zero fill below covers the rest
		}
		pos += int64(n)
	}
	return f.fillZeros(max(off, size), end, buf)
}

// fillZeros writes zeros over [from, to) using buf as scratch space.
func (f *file) fillZeros(from, to int64, buf []byte) error {
	clear(buf)
	for pos := from; pos < to; {
		chunk := buf[:min(int64(len(buf)), to-pos)]
		n, err := f.WriteAt(chunk, pos)
		if err != nil {
			return err
		}
		pos += int64(n)
	}
	return nil
}
