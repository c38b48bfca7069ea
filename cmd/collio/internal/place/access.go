// Package place computes data-locality-aware process placement for
// collective writes (the SetMatch algorithm of Venkatesan's thesis,
// chapter 3): from each rank's file access and two-phase's file domains it
// builds the application matrix (bytes each rank sends to each
// aggregator), maps ranks onto nodes so that those bytes stay on their
// node, and counts the bytes that cross nodes under a mapping. It is pure:
// no I/O, no communication.
package place

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/layout"
)

// Access is one rank's side of a collective write: the data bytes
// [DataStart, DataStart+Size) of the file view Filetype tiled from Disp.
// A nil Filetype means contiguous bytes from Disp.
type Access struct {
	Disp      int64
	Filetype  *layout.Type
	DataStart int64
	Size      int64
}

func (a Access) stream() *layout.Stream {
	if a.Filetype == nil {
		return layout.NewStream(layout.Bytes(max(a.DataStart+a.Size, 1)), a.Disp, 1)
	}
	return layout.NewViewStream(a.Filetype, a.Disp)
}

// Range returns the file bytes [first, last+1) the access touches, empty
// for an access of no bytes.
func (a Access) Range() (coll.Range, error) {
	if a.Size <= 0 {
		return coll.Range{}, nil
	}
	s := a.stream()
	if err := s.SeekData(a.DataStart); err != nil {
		return coll.Range{}, err
	}
	first, _, ok := s.Next(1)
	if !ok {
		return coll.Range{}, fmt.Errorf("place: the view holds no data")
	}
	if err := s.SeekData(a.DataStart + a.Size - 1); err != nil {
		return coll.Range{}, err
	}
	last, _, ok := s.Next(1)
	if !ok {
		return coll.Range{}, fmt.Errorf("place: the view holds fewer than %d bytes", a.DataStart+a.Size)
	}
	return coll.Range{Start: first, End: last + 1}, nil
}

// bytesIn returns the access's data bytes whose file offsets lie in each
// of the sorted, disjoint domains, calling fn for each domain with data.
func (a Access) bytesIn(s *layout.Stream, r coll.Range, domains []coll.Range, fn func(d int, n int64)) error {
	if r.Empty() {
		return nil
	}
	for d, dom := range domains {
		if dom.Empty() || dom.End <= r.Start || dom.Start >= r.End {
			continue
		}
		lo, err := s.DataBefore(dom.Start)
		if err != nil {
			return err
		}
		hi, err := s.DataBefore(dom.End)
		if err != nil {
			return err
		}
		end := a.DataStart + a.Size
		lo, hi = min(max(lo, a.DataStart), end), min(max(hi, a.DataStart), end)
		if hi > lo {
			fn(d, hi-lo)
		}
	}
	return nil
}
