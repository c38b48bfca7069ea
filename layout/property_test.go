package layout

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func collect(t *Type) []ent {
	var out []ent
	for off, n := range t.Blocks() {
		out = append(out, ent{off, n})
	}
	return out
}

// TestTypeMatchesReference compares every accessor with the brute-force
// expansion of random nested types.
func TestTypeMatchesReference(t *testing.T) {
	rapid.Check(t, checkTypeAgainstReference)
}

// FuzzTypeMatchesReference runs the same property under go test -fuzz.
func FuzzTypeMatchesReference(f *testing.F) {
	f.Fuzz(rapid.MakeFuzz(checkTypeAgainstReference))
}

func checkTypeAgainstReference(t *rapid.T) {
	s, typ, r := drawType(t, 3)
	want := r.merged()
	lb, ub := r.bounds()
	require.Equal(t, want, collect(typ), "blocks of %s (%+v)", typ, s)
	require.Equal(t, r.size(), typ.Size(), "size")
	require.Equal(t, lb, typ.LB(), "lb")
	require.Equal(t, ub, typ.UB(), "ub")
	require.Equal(t, ub-lb, typ.Extent(), "extent")
	require.Equal(t, int64(len(want)), typ.NumBlocks(), "NumBlocks of %s", typ)
	if len(r.ents) > 0 {
		tlb, tub := r.ents[0].off, r.ents[0].off+r.ents[0].n
		for _, e := range r.ents {
			tlb, tub = min(tlb, e.off), max(tub, e.off+e.n)
		}
		require.Equal(t, tlb, typ.TrueLB(), "true lb")
		require.Equal(t, tub-tlb, typ.TrueExtent(), "true extent")
	}
	contiguous := (len(want) == 1 && want[0].off == lb && want[0].n == ub-lb) ||
		(len(want) == 0 && ub == lb)
	require.Equal(t, contiguous, typ.IsContiguous(), "IsContiguous of %s", typ)
	require.Equal(t, refFiletypeOK(r), typ.CheckFiletype() == nil, "CheckFiletype of %s: %v", typ, typ.CheckFiletype())
	if r.size() > 0 {
		require.Equal(t, refTilesOverlap(r), typ.TilesOverlap(), "TilesOverlap of %s", typ)
	}
}

// refFiletypeOK is MPI's filetype rule applied to the expanded typemap.
func refFiletypeOK(r refT) bool {
	if len(r.ents) == 0 {
		return true
	}
	var prevEnd int64
	for _, e := range r.ents {
		if e.off < 0 || e.off < prevEnd {
			return false
		}
		prevEnd = e.off + e.n
	}
	return true
}

// refTilesOverlap is TilesOverlap from the expanded typemap.
func refTilesOverlap(r refT) bool {
	if len(r.ents) == 0 {
		return false
	}
	lo, hi := r.ents[0].off, r.ents[0].off+r.ents[0].n
	for _, e := range r.ents {
		lo, hi = min(lo, e.off), max(hi, e.off+e.n)
	}
	return lo+r.extent() < hi
}

// tiledBytes is the byte map of count tiles of r from base.
func tiledBytes(r refT, base int64, count int) []int64 {
	one := r.bytesOf()
	var out []int64
	for k := 0; k < count; k++ {
		for _, b := range one {
			out = append(out, base+int64(k)*r.extent()+b)
		}
	}
	return out
}

// runAt is the expected Next: offset of byte p and the length of the
// contiguous run from p, capped at max.
func runAt(bytes []int64, p, max int64) (int64, int64) {
	n := int64(1)
	for p+n < int64(len(bytes)) && n < max && bytes[p+n] == bytes[p]+n {
		n++
	}
	return bytes[p], n
}

func TestStreamMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, typ, r := drawType(t, 2)
		base := int64(rapid.IntRange(-40, 40).Draw(t, "base"))
		count := int64(rapid.IntRange(-1, 3).Draw(t, "count"))
		tiles := int(count)
		if count < 0 {
			tiles = 3 // an infinite stream is checked on its first tiles
		}
		bytes := tiledBytes(r, base, tiles)
		s := NewStream(typ, base, count)
		if count >= 0 {
			require.Equal(t, int64(len(bytes)), s.Len())
			walked := walkBytes(s, rapid.Int64Range(1, 9).Draw(t, "max"))
			require.Equal(t, bytes, walked)
			_, _, ok := s.Next(1)
			require.False(t, ok, "stream must end")
		}
		if len(bytes) == 0 {
			return
		}
		for range 5 {
			p := rapid.Int64Range(0, int64(len(bytes))-1).Draw(t, "pos")
			max := rapid.Int64Range(1, int64(len(bytes))-p).Draw(t, "max")
			require.NoError(t, s.SeekData(p))
			off, n, ok := s.Next(max)
			require.True(t, ok)
			wOff, wN := runAt(bytes, p, max)
			require.Equal(t, [2]int64{wOff, wN}, [2]int64{off, n}, "Next(%d) at %d of %s", max, p, typ)
			require.Equal(t, p+n, s.Pos())
		}
	})
}

// walkBytes reads a whole finite stream with pieces of at most max bytes,
// checking that every piece is maximal, and returns its byte map.
func walkBytes(s *Stream, max int64) []int64 {
	var out []int64
	for {
		off, n, ok := s.Next(max)
		if !ok {
			return out
		}
		for k := int64(0); k < n; k++ {
			out = append(out, off+k)
		}
	}
}

func TestStreamPiecesAreMaximal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, typ, _ := drawType(t, 2)
		s := NewStream(typ, 0, 2)
		var pieces []ent
		for {
			off, n, ok := s.Next(0)
			if !ok {
				break
			}
			pieces = append(pieces, ent{off, n})
		}
		for i := 1; i < len(pieces); i++ {
			require.NotEqual(t, pieces[i-1].off+pieces[i-1].n, pieces[i].off, "pieces %d and %d could merge", i-1, i)
		}
	})
}

func TestZipMatchesBytewiseMapping(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, ta, ra := drawType(t, 2)
		_, tb, rb := drawType(t, 2)
		ca, cb := rapid.IntRange(1, 3).Draw(t, "ca"), rapid.IntRange(1, 3).Draw(t, "cb")
		ba, bb := tiledBytes(ra, 5, ca), tiledBytes(rb, -3, cb)
		n := min(len(ba), len(bb))
		startA := rapid.IntRange(0, len(ba)-n).Draw(t, "startA")
		startB := rapid.IntRange(0, len(bb)-n).Draw(t, "startB")
		n = rapid.IntRange(0, n).Draw(t, "n")
		a, b := NewStream(ta, 5, int64(ca)), NewStream(tb, -3, int64(cb))
		require.NoError(t, a.SeekData(int64(startA)))
		require.NoError(t, b.SeekData(int64(startB)))
		var gotA, gotB []int64
		var calls [][3]int64
		err := Zip(a, b, int64(n), func(aOff, bOff, k int64) error {
			require.Positive(t, k)
			calls = append(calls, [3]int64{aOff, bOff, k})
			for j := int64(0); j < k; j++ {
				gotA, gotB = append(gotA, aOff+j), append(gotB, bOff+j)
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, orEmpty(ba[startA:startA+n]), orEmpty(gotA))
		require.Equal(t, orEmpty(bb[startB:startB+n]), orEmpty(gotB))
		for i := 1; i < len(calls); i++ {
			p, c := calls[i-1], calls[i]
			require.False(t, p[0]+p[2] == c[0] && p[1]+p[2] == c[1], "calls %v and %v could merge", p, c)
		}
	})
}

func orEmpty(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return slices.Clip(v)
}
