package coll

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Request lists travel compact: each piece as the signed varint of its
// offset from the end of the previous piece (the first from 0) and the
// uvarint of its length: 2-3 bytes for E3SM's pieces, not 16.

// MaxRequestLen is the most bytes AppendRequest adds for one piece.
const MaxRequestLen = 2 * binary.MaxVarintLen64

// AppendRequest appends the piece [off, off+n) to an encoded list whose
// previous piece ended at *end (0 before the first), and advances *end.
func AppendRequest(b []byte, end *int64, off, n int64) []byte {
	b = binary.AppendVarint(b, off-*end)
	b = binary.AppendUvarint(b, uint64(n))
	*end = off + n
	return b
}

// AppendRequests appends the encoding of list to b.
func AppendRequests(b []byte, list []Extent) []byte {
	var end int64
	for _, x := range list {
		b = AppendRequest(b, &end, x.Off, x.N)
	}
	return b
}

// DecodeRequests appends the n pieces of an encoded request list to
// list. A list that does not hold exactly n pieces, or a piece outside
// [0, 2^63), is an error, never a panic; n is checked against the bytes
// (at least 2 per piece) before anything is allocated.
func DecodeRequests(b []byte, n int, list []Extent) ([]Extent, error) {
	if n < 0 || n > len(b)/2 {
		return list, fmt.Errorf("%d pieces cannot be encoded in %d bytes", n, len(b))
	}
	list = slices.Grow(list, n)
	var end int64
	for k := 0; k < n; k++ {
		d, m := binary.Varint(b)
		if m <= 0 {
			return list, fmt.Errorf("piece %d of %d: bad offset", k, n)
		}
		b = b[m:]
		l, m := binary.Uvarint(b)
		if m <= 0 || l > math.MaxInt64 {
			return list, fmt.Errorf("piece %d of %d: bad length", k, n)
		}
		b = b[m:]
		if d < -end || d > math.MaxInt64-end || int64(l) > math.MaxInt64-(end+d) {
			return list, fmt.Errorf("piece %d of %d: %d bytes at offset %d%+d lie outside [0, 2^63)", k, n, l, end, d)
		}
		x := Extent{Off: end + d, N: int64(l)}
		list = append(list, x)
		end = x.End()
	}
	if len(b) != 0 {
		return list, fmt.Errorf("%d bytes after %d pieces", len(b), n)
	}
	return list, nil
}

// DecodeList decodes an announced request list, appending to out: count
// pieces, each of at least one byte, adding up to bytes and, with
// sorted, in increasing file order without overlaps (a segment member's
// whole access). Anything else is an error naming the problem.
func DecodeList(b []byte, count int, bytes int64, sorted bool, out []Extent) ([]Extent, error) {
	start := len(out)
	out, err := DecodeRequests(b, count, out)
	if err != nil {
		return out, fmt.Errorf("bad piece list: %v", err)
	}
	var sum int64
	end := int64(math.MinInt64)
	for _, x := range out[start:] {
		switch {
		case x.N <= 0:
			return out, fmt.Errorf("bad piece (%d, %d)", x.Off, x.N)
		case sorted && x.Off < end:
			return out, fmt.Errorf("unsorted piece list")
		case x.N > math.MaxInt64-sum:
			return out, fmt.Errorf("pieces add up to more than 2^63 bytes")
		}
		end = x.End()
		sum += x.N
	}
	if sum != bytes {
		return out, fmt.Errorf("%d bytes announced but %d listed", bytes, sum)
	}
	return out, nil
}
