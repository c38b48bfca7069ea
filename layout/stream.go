package layout

import (
	"math"
	"unsafe"

	"github.com/collio/collio/internal/ioerr"
)

// Stream is the byte stream of a type tiled count times from base: tile k
// starts at base + k*Extent(). Data position p is the p-th data byte of the
// stream. A Stream is not safe for concurrent use; make one per goroutine.
type Stream struct {
	t        *Type
	root     node  // the tiled tree, offsets absolute
	total    int64 // data bytes in the stream
	infinite bool
	pos      int64
	cur      cursor
	err      error // construction error (overflow), reported by SeekData
}

// infiniteSpan bounds the bytes (offsets and data) that an "infinite"
// stream covers, so that no offset arithmetic can overflow.
const infiniteSpan = int64(1) << 62

// NewStream tiles t count times from base; count < 0 means infinite (a file
// view), in practice about 2^62 bytes. A nil type or a type of size 0 gives
// an empty stream. A finite stream whose offsets would overflow int64 is
// empty and its SeekData reports the error.
func NewStream(t *Type, base int64, count int64) *Stream {
	s := &Stream{t: t}
	s.cur.done = true
	if t.Size() == 0 || count == 0 {
		return s
	}
	var b builder
	ext := t.Extent()
	if count < 0 {
		s.infinite = true
		unit := max64(max64(ext, t.TrueExtent()), t.Size())
		count = max64(1, infiniteSpan/unit)
		for s.root = b.repeat(base, count, ext, t.root); b.overflow && count > 1; {
			b.overflow, count = false, count/2
			s.root = b.repeat(base, count, ext, t.root)
		}
	} else {
		s.root = b.repeat(base, count, ext, t.root)
	}
	if b.overflow {
		s.root, s.err = nil, errTooLarge("stream")
		return s
	}
	s.total = s.root.sum().size
	s.cur.seek(s.root, 0, 0)
	return s
}

// NewViewStream is the stream of a file view: t tiled without end from
// base, except that a type whose tiles would overlap (TilesOverlap) gives
// only its first tile, so that file offsets stay ordered.
func NewViewStream(t *Type, base int64) *Stream {
	if t.TilesOverlap() {
		return NewStream(t, base, 1)
	}
	return NewStream(t, base, -1)
}

// SeekData positions the stream at data byte pos (not io.Seeker: it
// counts data bytes, not file offsets). It costs O(tree depth ×
// log(sequence width)), independent of the number of blocks.
func (s *Stream) SeekData(pos int64) error {
	if s.err != nil {
		return s.err
	}
	if pos < 0 {
		return ioerr.New(ioerr.ErrArg, "seek", "position %d is negative", pos)
	}
	if pos > s.total {
		return ioerr.New(ioerr.ErrArg, "seek", "position %d is past the end of the stream (%d data bytes)", pos, s.total)
	}
	s.pos = pos
	s.cur.seek(s.root, 0, pos)
	return nil
}

// Next returns the contiguous piece at the current position, at most max
// bytes (max <= 0 means no limit), and advances past it. Adjacent blocks
// are merged. ok is false at the end of the stream.
func (s *Stream) Next(max int64) (off, n int64, ok bool) {
	if s.cur.done {
		return 0, 0, false
	}
	if max <= 0 {
		max = math.MaxInt64
	}
	off, n = s.cur.take(max)
	s.pos += n
	return off, n, true
}

// Pos is the number of data bytes before the current position.
func (s *Stream) Pos() int64 { return s.pos }

// Len is the number of data bytes in the stream, or -1 if it is infinite.
func (s *Stream) Len() int64 {
	if s.infinite {
		return -1
	}
	return s.total
}

// Type is the type being tiled.
func (s *Stream) Type() *Type { return s.t }

// Footprint approximates the bytes held by the stream, its type included.
func (s *Stream) Footprint() int {
	seen := map[node]bool{}
	n := int(unsafe.Sizeof(*s)) + cap(s.cur.stack)*int(unsafe.Sizeof(frame{}))
	if s.t != nil {
		n += s.t.Footprint()
		if s.t.root != nil {
			seen[s.t.root] = true // already counted with the type
		}
	}
	return n + nodeFootprint(s.root, seen)
}

// Zip walks n data bytes of a and b together from their current positions,
// calling fn once for each maximal piece that is contiguous in both. It
// stops at the first error from fn, or fails if a stream ends first; the
// streams are then left where the walk stopped.
func Zip(a, b *Stream, n int64, fn func(aOff, bOff, n int64) error) error {
	if a == nil || b == nil || fn == nil {
		return ioerr.New(ioerr.ErrArg, "zip", "nil stream or callback")
	}
	for n > 0 {
		aOff, aLen, ok := a.Next(n)
		if !ok {
			return ioerr.New(ioerr.ErrArg, "zip", "first stream ended %d bytes early", n)
		}
		n -= aLen
		for aLen > 0 {
			bOff, bLen, ok := b.Next(aLen)
			if !ok {
				return ioerr.New(ioerr.ErrArg, "zip", "second stream ended %d bytes early", n+aLen)
			}
			if err := fn(aOff, bOff, bLen); err != nil {
				return err
			}
			aOff += bLen
			aLen -= bLen
		}
	}
	return nil
}

// ordered reports whether the stream's data bytes have strictly increasing
// file offsets, which SeekFile and DataBefore need. It is CheckFiletype's
// O(1) accept path (CheckFiletype's error path searches the tree to describe
// the problem, too slow to pay on every seek), plus the cached flag of the
// tiled tree.
func (s *Stream) ordered() error {
	if s.t.Size() > 0 {
		r := s.t.root.sum()
		if !r.mono || r.lo < 0 {
			return ioerr.New(ioerr.ErrType, "seek file",
				"the type's blocks are not ordered (see CheckFiletype): file offsets do not map to one data position")
		}
	}
	if s.err != nil {
		return s.err
	}
	if s.root != nil && !s.root.sum().mono {
		return ioerr.New(ioerr.ErrType, "seek file",
			"the tiles of the stream overlap (the type's extent is smaller than its data span; see TilesOverlap)")
	}
	return nil
}

// DataBefore returns the number of data bytes of the stream whose file
// offset is < off, without moving the stream. Like SeekFile it needs a type
// that passes CheckFiletype (an ErrType error otherwise) and costs
// O(tree depth × log(sequence width)), independent of the number of blocks.
// For an infinite stream, offsets past the about 2^62 bytes it covers count
// all the bytes it covers.
func (s *Stream) DataBefore(off int64) (int64, error) {
	if err := s.ordered(); err != nil {
		return 0, err
	}
	return dataBefore(s.root, 0, off), nil
}

// SeekFile positions the stream at the first data byte whose file offset
// is >= off, and returns that data position: inside a block when off falls
// in one, at the next block's first byte when off falls in a hole, 0 before
// the first data byte. If no data byte lies at or after off (finite
// stream), it positions at the end and returns Len(). Same preconditions
// and cost as DataBefore.
func (s *Stream) SeekFile(off int64) (int64, error) {
	pos, err := s.DataBefore(off)
	if err != nil {
		return 0, err
	}
	s.pos = pos
	s.cur.seek(s.root, 0, pos)
	return pos, nil
}
