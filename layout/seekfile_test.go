package layout

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// dataSpan is the lowest data offset and the highest data end of r
// (0, 0 without data).
func dataSpan(r refT) (lo, hi int64) {
	for i, e := range r.ents {
		if i == 0 {
			lo, hi = e.off, e.off+e.n
		}
		lo, hi = min(lo, e.off), max(hi, e.off+e.n)
	}
	return lo, hi
}

// genOrderedSpec draws a type description built to pass CheckFiletype:
// ordered children placed at increasing displacements with gaps between
// them. Marker bounds can still break the rule in rare struct cases, so
// drawOrdered filters the result.
func genOrderedSpec(t *rapid.T, depth int) *spec {
	kind := "bytes"
	if depth > 0 {
		kind = rapid.SampledFrom([]string{"bytes", "contiguous", "vector", "hvector", "indexed",
			"hindexed", "hindexedblock", "struct", "resized", "subarray"}).Draw(t, "kind")
	}
	small := func(name string, lo, hi int) int { return rapid.IntRange(lo, hi).Draw(t, name) }
	s := &spec{kind: kind}
	kid := func() (*spec, refT) {
		k := genOrderedSpec(t, depth-1)
		return k, expand(k)
	}
	switch kind {
	case "bytes":
		s.n = int64(small("n", 1, 4))
	case "contiguous":
		k, _ := kid()
		s.count, s.kids = small("count", 1, 4), []*spec{k}
	case "vector":
		k, _ := kid()
		s.count, s.blocklen = small("count", 1, 4), small("blocklen", 1, 3)
		s.stride = int64(s.blocklen + small("gap", 0, 2))
		s.kids = []*spec{k}
	case "hvector":
		k, r := kid()
		lo, hi := dataSpan(r)
		s.count, s.blocklen = small("count", 1, 4), small("blocklen", 1, 3)
		s.stride = int64(s.blocklen-1)*r.extent() + hi - lo + int64(small("gap", 0, 5))
		s.kids = []*spec{k}
	case "indexed":
		k, _ := kid()
		n := small("nblocks", 1, 5)
		var next int64
		for range n {
			bl := small("bl", 1, 3)
			d := next + int64(small("gap", 0, 2))
			s.blocklens, s.displs = append(s.blocklens, bl), append(s.displs, d)
			next = d + int64(bl)
		}
		s.kids = []*spec{k}
	case "hindexed", "hindexedblock", "struct":
		n := small("nblocks", 1, 4)
		s.blocklen = small("blocklen", 1, 3)
		var next int64
		var k *spec
		var r refT
		for i := range n {
			if i == 0 || kind == "struct" {
				k, r = kid()
				s.kids = append(s.kids, k)
			}
			bl := s.blocklen
			if kind != "hindexedblock" {
				bl = small("bl", 1, 3)
			}
			lo, hi := dataSpan(r)
			d := next - lo + int64(small("gap", 0, 5))
			s.blocklens, s.displs = append(s.blocklens, bl), append(s.displs, d)
			next = d + int64(bl-1)*r.extent() + hi
		}
	case "resized":
		k, r := kid()
		lo, hi := dataSpan(r)
		s.lb = lo - int64(small("below", 0, 6))
		s.ext = hi - lo + int64(small("slack", 0, 8))
		s.kids = []*spec{k}
	case "subarray":
		nd := small("ndims", 1, 3)
		for range nd {
			size := small("size", 1, 4)
			sub := small("subsize", 1, size)
			s.sizes = append(s.sizes, size)
			s.subsizes = append(s.subsizes, sub)
			s.starts = append(s.starts, small("start", 0, size-sub))
		}
		s.order = Order(small("order", 0, 1))
		k, _ := kid()
		s.kids = []*spec{k}
	}
	return s
}

// drawOrdered draws a type that passes CheckFiletype, either built to be
// ordered or a general random type that happens to be.
func drawOrdered(t *rapid.T) (*Type, refT) {
	for range 20 {
		var s *spec
		if rapid.IntRange(0, 3).Draw(t, "general") == 0 {
			s = genSpec(t, 3)
		} else {
			s = genOrderedSpec(t, 3)
		}
		r := expand(s)
		if len(r.ents) > specBlocks {
			continue
		}
		typ, err := build(s)
		require.NoError(t, err, "building %+v", s)
		if typ.CheckFiletype() == nil && !typ.TilesOverlap() {
			return typ, r
		}
	}
	return Bytes(3), expand(&spec{kind: "bytes", n: 3})
}

// countBelow is the number of entries of the sorted byte map below off.
func countBelow(bytes []int64, off int64) int64 {
	return int64(sort.Search(len(bytes), func(i int) bool { return bytes[i] >= off }))
}

func TestSeekFileMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ, r := drawOrdered(t)
		base := int64(rapid.IntRange(-40, 40).Draw(t, "base"))
		count := int64(rapid.IntRange(-1, 4).Draw(t, "count"))
		tiles := int(count)
		if count < 0 {
			tiles = 6 // an infinite stream is checked on its first tiles
		}
		bytes := tiledBytes(r, base, tiles)
		for i := 1; i < len(bytes); i++ {
			require.Less(t, bytes[i-1], bytes[i], "an ordered stream's byte offsets increase")
		}
		s := NewStream(typ, base, count)
		lo, _ := dataSpan(r)
		ext, size := typ.Extent(), typ.Size()

		// Offsets to probe: random ones around the data, and ones at, just
		// before and just after data bytes (block edges and holes).
		from, to := base-10, base+10
		if len(bytes) > 0 {
			from, to = min(from, bytes[0]-10), bytes[len(bytes)-1]+10
		}
		if count < 0 {
			// Stay where the reference's first tiles decide the answer
			// and at least one more tile follows.
			to = base + lo + int64(tiles-2)*ext
		}
		var offs []int64
		for range 15 {
			offs = append(offs, rapid.Int64Range(from, to).Draw(t, "off"))
		}
		for range 15 {
			if len(bytes) == 0 {
				break
			}
			b := bytes[rapid.IntRange(0, len(bytes)-1).Draw(t, "byte")]
			if b += int64(rapid.IntRange(-1, 1).Draw(t, "delta")); b <= to {
				offs = append(offs, b)
			}
		}
		if count >= 0 {
			offs = append(offs, math.MinInt64, math.MaxInt64, math.MinInt64/2, math.MaxInt64/2)
		}

		for _, off := range offs {
			want := countBelow(bytes, off)

			// DataBefore does not move the stream.
			atMax := int64(len(bytes))
			if s.Len() < 0 {
				atMax-- // an infinite stream has no end in the reference
			}
			at := rapid.Int64Range(0, atMax).Draw(t, "at")
			require.NoError(t, s.SeekData(at))
			got, err := s.DataBefore(off)
			require.NoError(t, err)
			require.Equal(t, want, got, "DataBefore(%d) of %s from %d ×%d", off, typ, base, count)
			require.Equal(t, at, s.Pos())
			checkNext(t, s, bytes, at, 0)

			pos, err := s.SeekFile(off)
			require.NoError(t, err)
			require.Equal(t, want, pos, "SeekFile(%d) of %s from %d ×%d", off, typ, base, count)
			require.Equal(t, want, s.Pos())
			checkNext(t, s, bytes, pos, 0)
		}

		if count >= 0 || size == 0 {
			return
		}
		// Far tiles of an infinite stream: shifting off by k extents shifts
		// the answer by k tiles of data.
		for range 5 {
			off := rapid.Int64Range(base+lo, to).Draw(t, "near off")
			k := rapid.Int64Range(1, 1e9).Draw(t, "tiles")
			want := countBelow(bytes, off)
			pos, err := s.SeekFile(off + k*ext)
			require.NoError(t, err)
			require.Equal(t, want+k*size, pos, "SeekFile(%d + %d×%d) of %s from %d", off, k, ext, typ, base)
			got, err := s.DataBefore(off + k*ext)
			require.NoError(t, err)
			require.Equal(t, want+k*size, got)
			checkNext(t, s, bytes, want, k*ext)
		}
	})
}

// checkNext reads one piece from s, which must be at data byte p of the
// reference byte map (shifted by shift bytes), and compares it with the
// reference. Past the end of a finite map the stream must be at its end.
func checkNext(t *rapid.T, s *Stream, bytes []int64, p, shift int64) {
	if p >= int64(len(bytes)) {
		require.Equal(t, s.Len(), p, "at the end, the position is Len()")
		_, _, ok := s.Next(1)
		require.False(t, ok, "stream must be at its end")
		return
	}
	max := rapid.Int64Range(1, int64(len(bytes))-p).Draw(t, "max")
	off, n, ok := s.Next(max)
	require.True(t, ok)
	wOff, wN := runAt(bytes, p, max)
	require.Equal(t, [2]int64{wOff + shift, wN}, [2]int64{off, n}, "Next(%d) at %d", max, p)
}

func TestSeekFileHandChecked(t *testing.T) {
	v, err := Vector(3, 2, 4, Byte) // blocks 0-1, 4-5, 8-9; extent 10
	require.NoError(t, err)
	s := NewStream(v, 10, 1)
	for _, c := range []struct{ off, pos, next int64 }{
		{math.MinInt64, 0, 10}, {0, 0, 10}, {10, 0, 10}, {11, 1, 11}, {12, 2, 14},
		{13, 2, 14}, {15, 3, 15}, {19, 5, 19}, {20, 6, -1}, {math.MaxInt64, 6, -1},
	} {
		pos, err := s.SeekFile(c.off)
		require.NoError(t, err)
		assert.Equal(t, c.pos, pos, "SeekFile(%d)", c.off)
		off, _, ok := s.Next(1)
		if c.next < 0 {
			assert.False(t, ok, "SeekFile(%d) is at the end", c.off)
		} else {
			assert.Equal(t, c.next, off, "SeekFile(%d)", c.off)
		}
		n, err := s.DataBefore(c.off)
		require.NoError(t, err)
		assert.Equal(t, c.pos, n, "DataBefore(%d)", c.off)
	}

	view := NewStream(v, 10, -1) // tile k at 10 + 10k
	pos, err := view.SeekFile(22)
	require.NoError(t, err)
	assert.Equal(t, int64(8), pos)
	pos, err = view.SeekFile(10 + 10*1000 + 5)
	require.NoError(t, err)
	assert.Equal(t, int64(6*1000+3), pos)
	off, n, _ := view.Next(0)
	assert.Equal(t, [2]int64{10 + 10*1000 + 5, 1}, [2]int64{off, n})

	huge := NewStream(Bytes(8), math.MaxInt64-4, 1) // offsets overflow
	_, err = huge.SeekFile(0)
	require.Error(t, err)
	_, err = huge.DataBefore(0)
	require.Error(t, err)

	empty := NewStream(Bytes(0), 5, -1)
	pos, err = empty.SeekFile(100)
	require.NoError(t, err)
	assert.Zero(t, pos)
}

func requireErrType(t require.TestingT, err error, msgAndArgs ...any) {
	require.Error(t, err, msgAndArgs...)
	require.True(t, errors.Is(err, ioerr.ErrType), "want ErrType, got %v", err)
}

func TestSeekFileRejectsUnorderedTypes(t *testing.T) {
	neg, err := Vector(3, 1, -2, Int32)
	require.NoError(t, err)
	narrow, err := Resized(Bytes(8), 0, 4) // tiles overlap
	require.NoError(t, err)
	overlap, err := HIndexed([]int{2, 2}, []int64{0, 1}, Byte)
	require.NoError(t, err)
	below, err := HIndexed([]int{1}, []int64{-4}, Byte) // negative offset
	require.NoError(t, err)
	for _, count := range []int64{-1, 2} { // tiles of narrow overlap from the second on
		_, err := NewStream(narrow, 0, count).SeekFile(3)
		requireErrType(t, err, "SeekFile on %d tiles of %s", count, narrow)
	}
	for _, typ := range []*Type{neg, overlap, below} {
		require.Error(t, typ.CheckFiletype())
		for _, count := range []int64{-1, 0, 2} {
			s := NewStream(typ, 0, count)
			_, err := s.SeekFile(3)
			requireErrType(t, err, "SeekFile on %s", typ)
			_, err = s.DataBefore(3)
			requireErrType(t, err, "DataBefore on %s", typ)
		}
	}

	rapid.Check(t, func(t *rapid.T) {
		_, typ, _ := drawType(t, 3)
		count := int64(rapid.IntRange(-1, 3).Draw(t, "count"))
		s := NewStream(typ, int64(rapid.IntRange(-20, 20).Draw(t, "base")), count)
		_, err := s.SeekFile(int64(rapid.IntRange(-50, 50).Draw(t, "off")))
		if typ.CheckFiletype() == nil && (!typ.TilesOverlap() || count == 0 || count == 1) {
			require.NoError(t, err, "SeekFile on %s", typ)
		} else {
			requireErrType(t, err, "SeekFile on %s", typ)
		}
	})
}

func TestSeekFileIsIndependentOfBlockCount(t *testing.T) {
	// 2^30 one-byte blocks at even offsets; an O(blocks) SeekFile (or an
	// O(blocks) order check) would make this test hang.
	v, err := Vector(1<<30, 1, 2, Byte)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, count := range []int64{1, -1} {
		s := NewStream(v, 0, count)
		for range 10000 {
			off := rng.Int64N(1<<31 + 10)
			pos, err := s.SeekFile(off)
			require.NoError(t, err)
			want := (off + 1) / 2 // bytes at 0, 2, ..., 2(want-1) lie below off
			if count > 0 {
				want = min(want, 1<<30)
			}
			require.Equal(t, want, pos, "SeekFile(%d)", off)
			o, n, ok := s.Next(100)
			if count > 0 && want == 1<<30 {
				require.False(t, ok)
				continue
			}
			require.True(t, ok)
			require.Equal(t, [2]int64{2 * want, 1}, [2]int64{o, n})
		}
	}

	// Irregular blocks (a real seq) tiled 2^20 times, viewed as an infinite
	// stream: check SeekFile against SeekData at the answer and before it.
	const width = 1024
	lens, displs := make([]int, width), make([]int, width)
	pos := 0
	for i := range width {
		lens[i] = 1 + rng.IntN(3)
		displs[i] = pos
		pos += lens[i] + 1 + rng.IntN(5)
	}
	ind, err := Indexed(lens, displs, Int32)
	require.NoError(t, err)
	ind, err = Resized(ind, 0, ind.Extent()+4)
	require.NoError(t, err)
	big, err := Contiguous(1<<20, ind)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), big.NumBlocks())
	s := NewStream(big, 1000, -1)
	for range 10000 {
		off := 1000 + rng.Int64N(3*big.Extent())
		p, err := s.SeekFile(off)
		require.NoError(t, err)
		at, _, ok := s.Next(1)
		require.True(t, ok)
		require.GreaterOrEqual(t, at, off, "SeekFile(%d) = %d", off, p)
		if p > 0 {
			require.NoError(t, s.SeekData(p-1))
			prev, _, _ := s.Next(1)
			require.Less(t, prev, off, "SeekFile(%d) = %d", off, p)
		}
	}
}
