package layout

import (
	"errors"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubarrayCOrderHandChecked(t *testing.T) {
	typ, err := Subarray([]int{4, 5, 6}, []int{2, 3, 4}, []int{1, 1, 1}, OrderC, Int32)
	require.NoError(t, err)
	var want []ent
	for i := int64(1); i <= 2; i++ {
		for j := int64(1); j <= 3; j++ {
			want = append(want, ent{((i*5+j)*6 + 1) * 4, 16})
		}
	}
	require.Equal(t, want, collect(typ))
	assert.Equal(t, int64(480), typ.Extent())
	assert.Equal(t, int64(0), typ.LB())
	assert.Equal(t, int64(96), typ.Size())
	assert.Equal(t, int64(6), typ.NumBlocks())
	assert.NoError(t, typ.CheckFiletype())
}

func TestSubarrayFortranOrderHandChecked(t *testing.T) {
	// Fortran order: element (i,j,k) of a 4×5×6 array is at i + 4*(j + 5*k);
	// the first dimension (2 elements from i=1) is contiguous.
	typ, err := Subarray([]int{4, 5, 6}, []int{2, 3, 4}, []int{1, 1, 1}, OrderFortran, Int32)
	require.NoError(t, err)
	var want []ent
	for k := int64(1); k <= 4; k++ {
		for j := int64(1); j <= 3; j++ {
			want = append(want, ent{(1 + 4*(j+5*k)) * 4, 8})
		}
	}
	require.Equal(t, want, collect(typ))
	assert.Equal(t, int64(480), typ.Extent())
	assert.Equal(t, int64(12), typ.NumBlocks())
}

func TestVectorOfResizedChildUsesChildExtent(t *testing.T) {
	wide, err := Resized(Int32, 0, 12)
	require.NoError(t, err)
	v, err := Vector(2, 2, 3, wide) // stride 3 extents = 36 bytes
	require.NoError(t, err)
	require.Equal(t, []ent{{0, 4}, {12, 4}, {36, 4}, {48, 4}}, collect(v))
	assert.Equal(t, int64(60), v.Extent()) // markers: lb 0, ub 36+12+12
}

func TestStructMarkersDominate(t *testing.T) {
	// MPI-3.1 §4.1.6: with an explicit lb/ub marker present, data outside
	// the markers does not move the bounds.
	marked, err := Resized(Int32, -4, 16)
	require.NoError(t, err)
	s, err := Struct([]int{1, 1}, []int64{0, 100}, []*Type{marked, Int64})
	require.NoError(t, err)
	assert.Equal(t, int64(-4), s.LB())
	assert.Equal(t, int64(12), s.UB())
	assert.Equal(t, int64(0), s.TrueLB())
	assert.Equal(t, int64(108), s.TrueExtent())
}

func TestEmptyTypes(t *testing.T) {
	for name, mk := range map[string]func() (*Type, error){
		"contiguous": func() (*Type, error) { return Contiguous(0, Float64) },
		"vector":     func() (*Type, error) { return Vector(3, 0, 2, Float64) },
		"indexed":    func() (*Type, error) { return Indexed(nil, nil, Float64) },
		"subarray":   func() (*Type, error) { return Subarray([]int{4}, []int{0}, []int{2}, OrderC, Float64) },
	} {
		typ, err := mk()
		require.NoError(t, err, name)
		assert.Zero(t, typ.Size(), name)
		assert.Zero(t, typ.NumBlocks(), name)
		assert.Empty(t, collect(typ), name)
		s := NewStream(typ, 0, -1)
		_, _, ok := s.Next(10)
		assert.False(t, ok, "%s: an empty type gives an empty stream, even tiled forever", name)
	}
	sub, _ := Subarray([]int{4}, []int{0}, []int{2}, OrderC, Float64)
	assert.Equal(t, int64(32), sub.Extent(), "an empty subarray still spans the array")
}

func TestIsContiguous(t *testing.T) {
	c, _ := Contiguous(10, Float64)
	assert.True(t, c.IsContiguous())
	v, _ := Vector(10, 1, 2, Float64)
	assert.False(t, v.IsContiguous())
	r, _ := Resized(c, 0, 100)
	assert.False(t, r.IsContiguous(), "holes after the data")
	sub, _ := Subarray([]int{4, 5}, []int{4, 5}, []int{0, 0}, OrderC, Int16)
	assert.True(t, sub.IsContiguous(), "a full subarray is contiguous")
}

func TestRegularIndexedIsFolded(t *testing.T) {
	displs := make([]int, 10000)
	for i := range displs {
		displs[i] = 3 * i
	}
	typ, err := IndexedBlock(2, displs, Float32)
	require.NoError(t, err)
	assert.Less(t, typ.Footprint(), 1024, "regular displacements fold into one repeat: %s", typ)
	assert.Equal(t, int64(10000), typ.NumBlocks())
}

func TestCheckFiletype(t *testing.T) {
	good := []*Type{Byte, must(Vector(4, 2, 3, Int32)), must(Subarray([]int{8, 8}, []int{2, 3}, []int{1, 2}, OrderC, Float64)),
		must(Indexed([]int{1, 2}, []int{0, 1}, Int32)), must(Resized(Int32, 0, 16))}
	for _, typ := range good {
		assert.NoError(t, typ.CheckFiletype(), "%s", typ)
	}
	bad := map[string]*Type{
		"offset 4 ":  must(HIndexed([]int{1, 1}, []int64{8, 4}, Int32)), // decreasing
		"offset 2 ":  must(HVector(2, 1, 2, Int32)),                     // overlapping
		"offset -8 ": must(HIndexed([]int{1}, []int64{-8}, Int32)),      // negative
		"offset -4 ": must(Vector(2, 1, -1, Int32)),                     // decreasing
	}
	for msg, typ := range bad {
		err := typ.CheckFiletype()
		require.Error(t, err, "%s", typ)
		assert.ErrorIs(t, err, ioerr.ErrType)
		assert.Contains(t, err.Error(), msg, "error names the offending offset")
	}
}

// A filetype whose extent is smaller than its data span is accepted, but a
// view over it has only its first tile (PnetCDF builds such filetypes).
func TestTilesOverlap(t *testing.T) {
	narrow := must(Resized(must(Contiguous(2, Int32)), 0, 4))
	require.NoError(t, narrow.CheckFiletype())
	assert.True(t, narrow.TilesOverlap())
	assert.False(t, must(Resized(Int32, 0, 16)).TilesOverlap())
	s := NewViewStream(narrow, 100)
	assert.Equal(t, int64(8), s.Len(), "one tile only")
	pos, err := s.SeekFile(104)
	require.NoError(t, err)
	assert.Equal(t, int64(4), pos)
	_, err = NewStream(narrow, 100, -1).SeekFile(104)
	assert.ErrorIs(t, err, ioerr.ErrType, "tiling it without end is not ordered")
	assert.Equal(t, int64(-1), NewViewStream(Int32, 0).Len(), "ordinary views are infinite")
	assert.ErrorContains(t, TileError(narrow, 9), "first tile")
}

func must(t *Type, err error) *Type {
	if err != nil {
		panic(err)
	}
	return t
}

func TestConstructorErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		class *ioerr.Class
		words string
	}{
		{"nil type", second(Contiguous(1, nil)), ioerr.ErrType, "oldtype is nil"},
		{"negative count", second(Contiguous(-1, Byte)), ioerr.ErrArg, "count = -1"},
		{"negative blocklen", second(Vector(1, -2, 1, Byte)), ioerr.ErrArg, "blocklength = -2"},
		{"hvector nil", second(HVector(1, 1, 1, nil)), ioerr.ErrType, "oldtype"},
		{"indexed lengths", second(Indexed([]int{1}, []int{1, 2}, Byte)), ioerr.ErrArg, "len(blocklengths) = 1"},
		{"indexed negative", second(Indexed([]int{-1}, []int{1}, Byte)), ioerr.ErrArg, "blocklengths[0] = -1"},
		{"hindexed negative", second(HIndexedBlock(-3, []int64{0}, Byte)), ioerr.ErrArg, "= -3"},
		{"struct lengths", second(Struct([]int{1}, []int64{0}, nil)), ioerr.ErrArg, "slice lengths differ"},
		{"struct nil", second(Struct([]int{1}, []int64{0}, []*Type{nil})), ioerr.ErrType, "types[0] is nil"},
		{"resized", second(Resized(Byte, 0, -1)), ioerr.ErrArg, "extent = -1"},
		{"subarray range", second(Subarray([]int{4, 5}, []int{2, 3}, []int{1, 3}, OrderC, Byte)), ioerr.ErrArg, "starts[1] + subsizes[1] = 3 + 3 exceeds sizes[1] = 5"},
		{"subarray dims", second(Subarray([]int{4}, []int{2, 3}, []int{1}, OrderC, Byte)), ioerr.ErrArg, "slice lengths differ"},
		{"subarray size", second(Subarray([]int{0}, []int{0}, []int{0}, OrderC, Byte)), ioerr.ErrArg, "sizes[0] = 0"},
		{"subarray order", second(Subarray([]int{1}, []int{1}, []int{0}, Order(7), Byte)), ioerr.ErrArg, "order = 7"},
		{"darray psizes", second(Darray(4, 0, []int{8}, []Distrib{DistribBlock}, []int{DargDefault}, []int{3}, OrderC, Byte)), ioerr.ErrArg, "product of psizes"},
		{"darray rank", second(Darray(2, 2, []int{8}, []Distrib{DistribBlock}, []int{DargDefault}, []int{2}, OrderC, Byte)), ioerr.ErrArg, "rank = 2"},
		{"darray darg", second(Darray(2, 0, []int{8}, []Distrib{DistribBlock}, []int{3}, []int{2}, OrderC, Byte)), ioerr.ErrArg, "dargs[0] * psizes[0] = 3 * 2"},
		{"darray none", second(Darray(2, 0, []int{8}, []Distrib{DistribNone}, []int{DargDefault}, []int{2}, OrderC, Byte)), ioerr.ErrArg, "DistribNone"},
		{"darray distrib", second(Darray(1, 0, []int{8}, []Distrib{9}, []int{DargDefault}, []int{1}, OrderC, Byte)), ioerr.ErrArg, "distribs[0] = 9"},
		{"darray cyclic darg", second(Darray(1, 0, []int{8}, []Distrib{DistribCyclic}, []int{0}, []int{1}, OrderC, Byte)), ioerr.ErrArg, "dargs[0] = 0"},
		{"overflow", second(Contiguous(1<<62, Float64)), ioerr.ErrArg, "too large"},
	}
	for _, c := range cases {
		require.Error(t, c.err, c.name)
		var e *ioerr.Error
		require.True(t, errors.As(c.err, &e), c.name)
		assert.ErrorIs(t, c.err, c.class, c.name)
		assert.Contains(t, c.err.Error(), c.words, c.name)
	}
}

func second(_ *Type, err error) error { return err }

func TestStreamSeekErrors(t *testing.T) {
	s := NewStream(must(Vector(3, 1, 2, Int32)), 0, 2) // 24 data bytes
	assert.ErrorIs(t, s.SeekData(-1), ioerr.ErrArg)
	assert.ErrorIs(t, s.SeekData(25), ioerr.ErrArg)
	require.NoError(t, s.SeekData(24))
	_, _, ok := s.Next(4)
	assert.False(t, ok)
	require.NoError(t, s.SeekData(23))
	off, n, ok := s.Next(0) // max <= 0: no limit
	assert.True(t, ok)
	assert.Equal(t, [2]int64{20 + 16 + 3, 1}, [2]int64{off, n}) // extent 20
}

func TestZipErrors(t *testing.T) {
	a, b := NewStream(Int32, 0, 1), NewStream(Int64, 0, 1)
	assert.ErrorIs(t, Zip(a, b, 8, func(_, _, _ int64) error { return nil }), ioerr.ErrArg)
	stop := errors.New("stop")
	a, b = NewStream(Int32, 0, -1), NewStream(Int64, 0, -1)
	assert.ErrorIs(t, Zip(a, b, 8, func(_, _, _ int64) error { return stop }), stop)
}

func TestString(t *testing.T) {
	typ := must(Subarray([]int{4, 5, 6}, []int{2, 3, 4}, []int{1, 1, 1}, OrderC, Int32))
	s := typ.String()
	assert.Contains(t, s, "size=96")
	assert.Contains(t, s, "extent=480")
	long := must(Indexed([]int{1, 1, 1, 1, 1, 1}, []int{0, 2, 7, 20, 21, 40}, Byte)).String()
	assert.Contains(t, long, "…+")
}
