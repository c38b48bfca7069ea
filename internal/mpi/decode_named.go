//go:build cgo

package mpi

import "github.com/collio/collio/layout"

// Predefined types are described by their data bytes. Almost all are
// contiguous; the pair types used by MINLOC/MAXLOC may carry padding, at
// the end (a resize) or, for MPI_SHORT_INT, inside (a hole).

// namedHoles lists the named types whose data is not one contiguous run,
// as (offset, length) pieces in their C layout.
var namedHoles = []struct {
	handle func() Datatype
	pieces [][2]int64
}{
	{TypeShortInt, [][2]int64{{0, 2}, {4, 4}}}, // struct { short; int; }
}

func decodeNamed(t Datatype) (*layout.Type, error) {
	size, err := t.Size()
	if err != nil {
		return nil, err
	}
	lb, ext, err := t.Extent()
	if err != nil {
		return nil, err
	}
	tlb, text, err := t.TrueExtent()
	if err != nil {
		return nil, err
	}
	var data *layout.Type
	switch {
	case tlb == 0 && text == size:
		data = layout.Bytes(size)
	default:
		data, err = namedWithHoles(t)
		if err != nil {
			return nil, err
		}
	}
	if data.LB() == lb && data.Extent() == ext {
		return data, nil
	}
	return layout.Resized(data, lb, ext)
}

func namedWithHoles(t Datatype) (*layout.Type, error) {
	for _, h := range namedHoles {
		if h.handle() != t {
			continue
		}
		bls := make([]int, len(h.pieces))
		displs := make([]int64, len(h.pieces))
		types := make([]*layout.Type, len(h.pieces))
		for i, p := range h.pieces {
			bls[i], displs[i], types[i] = 1, p[0], layout.Bytes(p[1])
		}
		return layout.Struct(bls, displs, types)
	}
	return nil, decodeUnsupported("MPI_COMBINER_NAMED", "predefined type %s has holes and no known layout", t.describe())
}
