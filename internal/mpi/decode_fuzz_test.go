//go:build cgo

package mpi

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
)

// FuzzBuildFromContents feeds build, the pure half of the datatype decoder
// (MPI_Type_get_contents' integers, addresses and child layouts to a
// layout constructor), arbitrary argument lists for every combiner: counts
// that disagree with the lengths, negative and huge counts and dimensions,
// unknown orders and distributions, children with sticky bounds
// (MPI_LB/MPI_UB markers, Resized). It never panics; a refused argument
// list is an invalid-datatype or invalid-argument error naming the
// combiner. Seeds: testdata/fuzz/FuzzBuildFromContents.
func FuzzBuildFromContents(f *testing.F) {
	combiners := slices.Sorted(maps.Keys(combinerNames))
	f.Fuzz(func(t *testing.T, comb uint8, ints, addrs, kids []byte) {
		cb := combiners[int(comb)%len(combiners)]
		c := contents{types: make([]Datatype, len(kids))}
		for _, b := range ints {
			c.ints = append(c.ints, int(contentsValue(b, math.MinInt32, math.MaxInt32)))
		}
		for i := 0; i+1 < len(addrs); i += 2 {
			v := contentsValue(addrs[i], math.MinInt64, math.MaxInt64)
			if addrs[i+1]&1 != 0 {
				v *= 1 << 20
			}
			c.addrs = append(c.addrs, v)
		}
		kidLayouts := make([]*layout.Type, len(kids))
		for i, k := range kids {
			kidLayouts[i] = childLayout(k)
		}
		lt, err := build(cb, c, kidLayouts)
		if err == nil {
			_, _, _ = lt.Size(), lt.Extent(), lt.NumBlocks()
			_ = lt.CheckFiletype()
			return
		}
		err = decodeWrap(combinerNames[cb], err)
		if cl := ioerr.ClassOf(err); cl != ioerr.ErrType && cl != ioerr.ErrArg {
			t.Fatalf("%s: error of class %v: %v", combinerNames[cb], cl, err)
		}
	})
}

// contentsValue maps a byte to a constructor argument: mostly small
// (-4..11, which covers MPI's order and distribution constants and
// MPI_DISTRIBUTE_DFLT_DARG), sometimes an extreme.
func contentsValue(b byte, lo, hi int64) int64 {
	switch {
	case b < 240:
		return int64(b%16) - 4
	case b < 244:
		return hi
	case b < 248:
		return lo
	case b < 252:
		return 1 << 30
	}
	return -(1 << 30)
}

// childLayout is a child type: basic, empty, or with sticky bounds.
func childLayout(b byte) *layout.Type {
	base := layout.Bytes(int64(b % 9))
	switch b / 64 {
	case 1:
		t, _ := layout.Resized(base, int64(b%5)-2, int64(b%13))
		return t
	case 2:
		t, _ := layout.Vector(2, 1, 3, base)
		return t
	}
	return base
}
