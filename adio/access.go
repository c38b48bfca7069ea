package adio

import (
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
)

// Access is the memory side of a transfer: Count instances of MemType laid
// out in Buf from its start (MPI's buf, count, datatype). A nil MemType
// means Count contiguous bytes.
type Access struct {
	Buf     []byte
	Count   int64
	MemType *layout.Type
	// Err, when set, is a problem the caller found with this rank's
	// arguments (say, a datatype it could not decode). A collective call
	// still enters the collective and fails on every rank with this error,
	// instead of leaving the other ranks waiting.
	Err error
}

// Bytes is the common case: all of p, contiguous.
func Bytes(p []byte) Access { return Access{Buf: p, Count: int64(len(p))} }

// Size is the number of data bytes the access moves.
func (a Access) Size() int64 {
	if a.MemType == nil {
		return a.Count
	}
	return a.Count * a.MemType.Size()
}

// checkedSize is Size and whether it fits in an int64 (Size wraps).
func (a Access) checkedSize() (int64, bool) {
	if a.MemType == nil {
		return a.Count, true
	}
	return mul64(a.Count, a.MemType.Size())
}

// contiguous reports whether the data is one run from Buf[0].
func (a Access) contiguous() bool {
	return a.MemType == nil || a.MemType.IsContiguous() && a.MemType.LB() == 0
}

// check validates the access against the buffer and the etype size.
func (a Access) check(op string, rank int, etype int64) error {
	bad := func(format string, args ...any) error {
		e := ioerr.New(ioerr.ErrArg, op, format, args...)
		e.Rank = rank
		return e
	}
	if a.Err != nil {
		return a.Err
	}
	if a.Count < 0 {
		return bad("count %d is negative", a.Count)
	}
	if _, ok := a.checkedSize(); !ok {
		return bad("count %d of datatype %s (%d bytes each) is more than 2^63-1 bytes", a.Count, a.MemType, a.MemType.Size())
	}
	if a.Size() == 0 {
		return nil
	}
	if a.Buf == nil {
		return bad("buffer is nil but %d bytes are to be transferred", a.Size())
	}
	if a.MemType == nil {
		if int64(len(a.Buf)) < a.Count {
			return bad("buffer of %d bytes is shorter than count %d", len(a.Buf), a.Count)
		}
	} else {
		t := a.MemType
		if t.TrueLB() < 0 {
			return bad("memory datatype %s reaches %d bytes before the buffer start", t, -t.TrueLB())
		}
		if t.Extent() < 0 {
			return bad("memory datatype %s has a negative extent", t)
		}
		need, ok := mul64(a.Count-1, t.Extent())
		if ok {
			need, ok = add64(need, t.TrueLB()+t.TrueExtent())
		}
		if !ok {
			return bad("buffer of %d bytes is too short: %d instances of %s span more than 2^63-1 bytes", len(a.Buf), a.Count, t)
		}
		if need > int64(len(a.Buf)) {
			return bad("buffer of %d bytes is too short: %d instances of %s need %d bytes", len(a.Buf), a.Count, t, need)
		}
	}
	if a.Size()%etype != 0 {
		return bad("transfer of %d bytes is not a whole number of etypes (etype size %d)", a.Size(), etype)
	}
	return nil
}

// stream returns the memory side's data stream.
func (a Access) stream() *layout.Stream {
	if a.contiguous() {
		// One block, so pieces are never cut at element boundaries.
		return layout.NewStream(layout.Bytes(a.Size()), 0, 1)
	}
	return layout.NewStream(a.MemType, 0, a.Count)
}
