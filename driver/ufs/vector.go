package ufs

import (
	"io"
	"slices"

	"golang.org/x/sys/unix"
)

// iovMax is Linux's IOV_MAX: the most buffers one preadv/pwritev takes.
const iovMax = 1024

// WriteV writes bufs back to back starting at off with pwritev, in batches
// of at most iovMax buffers, until every byte is written or an error occurs.
func (f *file) WriteV(bufs [][]byte, off int64) (int, error) {
	if f.directOn(true) {
		return f.noted(f.writeDirect("pwritev", bufs, off))
	}
	return f.noted(f.vectored("pwritev", bufs, off, f.pwritev, io.ErrShortWrite))
}

// ReadV fills bufs from the contiguous range starting at off with preadv.
// At end of file it returns the count read and io.EOF.
func (f *file) ReadV(bufs [][]byte, off int64) (int, error) {
	if f.directOn(false) {
		return f.readDirect("preadv", bufs, off)
	}
	return f.vectored("preadv", bufs, off, f.preadv, io.EOF)
}

type vectorCall func(fd int, iovs [][]byte, off int64) (int, error)

// vectored drives a preadv/pwritev loop. noProgress is returned when the
// call moves zero bytes without an errno (EOF for reads).
func (f *file) vectored(op string, bufs [][]byte, off int64, call vectorCall, noProgress error) (int, error) {
	if off < 0 {
		return 0, f.pathErr(op, unix.EINVAL)
	}
	// The list is copied only when it must change: empty buffers to drop,
	// or a buffer moved in part to reslice (the caller's entries stay as
	// they are). Most calls move everything at once and copy nothing, as
	// runs moved one call each (no cgo, O_DIRECT) would otherwise cost an
	// allocation each.
	pending, copied := bufs, false
	if slices.ContainsFunc(bufs, isEmpty) {
		pending, copied = nonEmpty(bufs), true
	}
	if len(pending) == 0 {
		return 0, nil
	}
	total := 0
	err := f.withFD(op, func(fd int) error {
		for len(pending) > 0 {
			batch := pending[:min(len(pending), iovMax)]
			n, err := call(fd, batch, off+int64(total))
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return f.pathErr(op, err)
			case n == 0:
				if noProgress == io.EOF {
					return io.EOF
				}
				return f.pathErr(op, noProgress)
			}
			total += n
			if !copied && splitsBuffer(pending, n) {
				pending, copied = slices.Clone(pending), true
			}
			pending = advance(pending, n)
		}
		return nil
	})
	return total, err
}

func isEmpty(b []byte) bool { return len(b) == 0 }

// splitsBuffer reports whether the first n bytes of bufs end inside a
// buffer, which advance then reslices.
func splitsBuffer(bufs [][]byte, n int) bool {
	for _, b := range bufs {
		if n < len(b) {
			return n > 0
		}
		n -= len(b)
	}
	return false
}

// nonEmpty copies the list without zero-length buffers, so that the loop
// can reslice entries without touching the caller's slice headers.
func nonEmpty(bufs [][]byte) [][]byte {
	out := make([][]byte, 0, len(bufs))
	for _, b := range bufs {
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// advance drops the first n bytes from the buffer list: whole buffers
// first, then the front of a partially transferred one.
func advance(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n >= len(bufs[0]) {
			n -= len(bufs[0])
			bufs = bufs[1:]
			continue
		}
		bufs[0] = bufs[0][n:]
		n = 0
	}
	return bufs
}
