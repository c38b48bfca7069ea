package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

// Message tags on the group communicator. Between one pair of ranks
// messages of one tag arrive in order, which is all the protocol needs.
const (
	tagHeader = 1 // member -> leader: (pieces, bytes, list bytes)
	tagList   = 2 // member -> leader: the (offset, length) list, coll's encoding
	tagCount  = 3 // leader -> member: bytes the cycle takes (dynamic write)
	tagData   = 4 // data, either way
)

// filePieces lists the file pieces of an access in data order, adjacent
// ones merged. They must be strictly increasing (MPI's monotone file
// views); anything else is reported as an error.
func filePieces(a coll.Access) ([]coll.Extent, error) {
	if a.Size <= 0 {
		return nil, nil
	}
	if a.Filetype == nil {
		return nil, errors.New("segment: access without a filetype")
	}
	fs := a.FileStream()
	if err := fs.SeekData(a.DataStart); err != nil {
		return nil, err
	}
	var out []coll.Extent
	prevEnd := int64(math.MinInt64)
	for left := a.Size; left > 0; {
		off, n, ok := fs.Next(left)
		if !ok || n <= 0 {
			return nil, fmt.Errorf("segment: file view ends %d bytes early", left)
		}
		switch {
		case off < prevEnd || off < 0:
			return nil, fmt.Errorf("segment: file view offsets not increasing (%d after %d)", off, prevEnd)
		case off == prevEnd:
			out[len(out)-1].N += n
		default:
			out = append(out, coll.Extent{Off: off, N: n})
		}
		prevEnd = off + n
		left -= n
	}
	return out, nil
}

// memCursor walks an access's memory side in data order: a contiguous
// buffer is handed out in place, a noncontiguous layout is packed and
// unpacked through its stream.
type memCursor struct {
	buf []byte
	ms  *layout.Stream // nil when contiguous
	pos int64          // data bytes consumed (contiguous case)
}

func newMemCursor(a coll.Access) (*memCursor, error) {
	if a.MemContiguous() {
		if int64(len(a.Buf)) < a.Size {
			return nil, fmt.Errorf("segment: %d-byte buffer for %d bytes", len(a.Buf), a.Size)
		}
		return &memCursor{buf: a.Buf}, nil
	}
	return &memCursor{buf: a.Buf, ms: a.MemStream()}, nil
}

func (c *memCursor) contiguous() bool { return c.ms == nil }

// slice returns the next k data bytes of a contiguous buffer, in place.
func (c *memCursor) slice(k int64) []byte {
	b := c.buf[c.pos : c.pos+k]
	c.pos += k
	return b
}

// pack copies the next len(dst) data bytes into dst, or moves (copy
// from dst) for unpack. On a layout that does not fit the buffer it
// zero-fills what it could not move and reports the error, so that the
// exchange can go on.
func (c *memCursor) move(dst []byte, unpack bool) error {
	at := 0
	for at < len(dst) {
		off, n, ok := c.ms.Next(int64(len(dst) - at))
		if !ok || off < 0 || off+n > int64(len(c.buf)) {
			if !unpack {
				clear(dst[at:])
			}
			return errors.New("segment: memory layout does not fit the buffer")
		}
		if unpack {
			copy(c.buf[off:off+n], dst[at:])
		} else {
			copy(dst[at:], c.buf[off:off+n])
		}
		at += int(n)
	}
	return nil
}

// headerLen is a member's header: pieces, bytes and the bytes of its
// encoded list, little-endian.
const headerLen = 24

func putHeader(b []byte, pieces int, bytes int64, list int) {
	binary.LittleEndian.PutUint64(b, uint64(pieces))
	binary.LittleEndian.PutUint64(b[8:], uint64(bytes))
	binary.LittleEndian.PutUint64(b[16:], uint64(list))
}

// decodeList parses a member's list of count pieces and checks it against
// its header: sorted, disjoint pieces inside [0, 2^63), positive lengths
// summing to bytes.
func decodeList(b []byte, count int, bytes int64) ([]coll.Extent, error) {
	l, err := coll.DecodeList(b, count, bytes, true, nil)
	if err != nil {
		return nil, fmt.Errorf("segment: a member's list: %w", err)
	}
	return l, nil
}

// gatherLists has every member send its piece list to the leader
// (point-to-point: a header, then the list) and fills, on the
// leader, every member's list (its own included) and byte count. A
// malformed list (impossible between ranks running this code) sets
// r.abort, which the leader then broadcasts so that the group stops
// together instead of hanging.
func (r *run) gatherLists() error {
	if !r.isLeader() {
		var hdr [headerLen]byte
		list := coll.AppendRequests(nil, r.mine)
		putHeader(hdr[:], len(r.mine), r.bytes, len(list))
		reqs := make([]comm.Request, 0, 2)
		q, err := r.c.Isend(hdr[:], r.leader, tagHeader)
		if err != nil {
			return err
		}
		reqs = append(reqs, q)
		r.sent(headerLen)
		if len(r.mine) > 0 {
			if q, err = r.c.Isend(list, r.leader, tagList); err != nil {
				return err
			}
			reqs = append(reqs, q)
			r.sent(len(list))
		}
		return comm.Waitall(reqs...)
	}
	n := r.c.Size()
	hdrs := make([]byte, headerLen*n)
	reqs := make([]comm.Request, 0, n)
	for m := range n {
		if m == r.me {
			continue
		}
		q, err := r.c.Irecv(hdrs[headerLen*m:headerLen*(m+1)], m, tagHeader)
		if err != nil {
			return err
		}
		reqs = append(reqs, q)
	}
	if err := comm.Waitall(reqs...); err != nil {
		return err
	}
	r.lists, r.totals = make([][]coll.Extent, n), make([]int64, n)
	raw := make([][]byte, n)
	count := make([]int, n)
	reqs = reqs[:0]
	for m := range n {
		if m == r.me {
			r.lists[m], r.totals[m] = r.mine, r.bytes
			continue
		}
		r.recvd(headerLen)
		np := binary.LittleEndian.Uint64(hdrs[headerLen*m:])
		r.totals[m] = int64(binary.LittleEndian.Uint64(hdrs[headerLen*m+8:]))
		nl := binary.LittleEndian.Uint64(hdrs[headerLen*m+16:])
		if np == 0 {
			continue
		}
		// Each piece takes 2 to 20 bytes (two varints).
		if np > math.MaxInt32 || r.totals[m] <= 0 || nl < 2*np || nl > 20*np {
			r.abort = fmt.Errorf("segment: member %d announced %d pieces, %d bytes in a list of %d bytes", m, np, r.totals[m], nl)
			continue
		}
		count[m] = int(np)
		raw[m] = make([]byte, nl)
		q, err := r.c.Irecv(raw[m], m, tagList)
		if err != nil {
			return err
		}
		reqs = append(reqs, q)
		r.recvd(len(raw[m]))
	}
	if err := comm.Waitall(reqs...); err != nil {
		return err
	}
	for m := range n {
		if m == r.me {
			continue
		}
		l, err := decodeList(raw[m], count[m], r.totals[m])
		if err != nil && r.abort == nil {
			r.abort = fmt.Errorf("segment: member %d: %w", m, err)
		}
		r.lists[m] = l
	}
	return nil
}
