//go:build cgo

package mpi_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
)

func TestPredefinedSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		dt   mpi.Datatype
		size int64
		ext  int64
	}{
		{"byte", mpi.Byte(), 1, 1}, {"char", mpi.TypeChar(), 1, 1}, {"short", mpi.TypeShort(), 2, 2},
		{"int", mpi.TypeInt(), 4, 4}, {"long", mpi.TypeLong(), 8, 8}, {"int64", mpi.TypeInt64(), 8, 8},
		{"float", mpi.TypeFloat(), 4, 4}, {"double", mpi.TypeDouble(), 8, 8}, {"short_int", mpi.TypeShortInt(), 6, 8},
	} {
		size, err := tc.dt.Size()
		require.NoError(t, err, tc.name)
		lb, ext, err := tc.dt.Extent()
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.size, size, tc.name)
		assert.Equal(t, int64(0), lb, tc.name)
		assert.Equal(t, tc.ext, ext, tc.name)
	}
}

func TestVectorBoundsAndFint(t *testing.T) {
	v, err := mpi.TypeVector(3, 2, 4, mpi.TypeInt())
	require.NoError(t, err)
	defer func() { require.NoError(t, v.Free()) }()
	size, err := v.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(24), size)
	lb, ext, err := v.Extent()
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 40}, [2]int64{lb, ext}) // (2*4+2) ints

	r, err := mpi.TypeResized(v, -8, 64)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Free()) }()
	lb, ext, err = r.Extent()
	require.NoError(t, err)
	assert.Equal(t, [2]int64{-8, 64}, [2]int64{lb, ext})
	tlb, text, err := r.TrueExtent()
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 40}, [2]int64{tlb, text})

	back := mpi.DatatypeFromFint(r.Fint())
	assert.Equal(t, r.Pointer(), back.Pointer())
}

func TestFreeRefusesPredefinedAndNull(t *testing.T) {
	err := mpi.TypeInt().Free()
	require.Error(t, err)
	assert.ErrorIs(t, err, ioerr.ErrType)
	assert.Contains(t, err.Error(), "MPI_INT")

	// MPI_DATATYPE_NULL (Fortran handle 0 in Open MPI), the zero value
	// and a bad Fortran handle must all fail in Go, never reach MPI.
	require.True(t, mpi.DatatypeFromFint(0).IsNull())
	assert.Equal(t, int32(0), mpi.Datatype{}.Fint())
	for _, bad := range []mpi.Datatype{mpi.DatatypeFromFint(0), {}, mpi.DatatypeFromFint(-1)} {
		assert.Error(t, bad.Free())
		assert.Error(t, bad.Commit())
		_, err := bad.Size()
		assert.Error(t, err)
		_, _, err = bad.Extent()
		assert.Error(t, err)
		_, err = bad.Layout()
		assert.Error(t, err)
	}
}

// Bad constructor arguments must come back as errors: reaching MPI with
// them would abort the job through MPI_COMM_WORLD's handler.
func TestConstructorArgumentErrors(t *testing.T) {
	i := mpi.TypeInt()
	cases := map[string]func() (mpi.Datatype, error){
		"negative count":      func() (mpi.Datatype, error) { return mpi.TypeContiguous(-1, i) },
		"negative blocklen":   func() (mpi.Datatype, error) { return mpi.TypeVector(2, -1, 3, i) },
		"count over int32":    func() (mpi.Datatype, error) { return mpi.TypeHvector(1<<31, 1, 8, i) },
		"indexed lengths":     func() (mpi.Datatype, error) { return mpi.TypeIndexed([]int{1, 2}, []int{0}, i) },
		"hindexed lengths":    func() (mpi.Datatype, error) { return mpi.TypeHindexed([]int{1}, nil, i) },
		"displ over int32":    func() (mpi.Datatype, error) { return mpi.TypeIndexedBlock(1, []int{1 << 40}, i) },
		"struct lengths":      func() (mpi.Datatype, error) { return mpi.TypeStruct([]int{1}, []int64{0}, nil) },
		"struct null child":   func() (mpi.Datatype, error) { return mpi.TypeStruct([]int{1}, []int64{0}, []mpi.Datatype{{}}) },
		"subarray no dims":    func() (mpi.Datatype, error) { return mpi.TypeSubarray(nil, nil, nil, mpi.OrderC, i) },
		"subarray too big":    func() (mpi.Datatype, error) { return mpi.TypeSubarray([]int{4}, []int{3}, []int{2}, mpi.OrderC, i) },
		"subarray bad order":  func() (mpi.Datatype, error) { return mpi.TypeSubarray([]int{4}, []int{3}, []int{0}, 7, i) },
		"subarray zero size":  func() (mpi.Datatype, error) { return mpi.TypeSubarray([]int{4}, []int{0}, []int{0}, mpi.OrderC, i) },
		"darray bad rank":     func() (mpi.Datatype, error) { return darray1D(2, 2, mpi.DistribBlock, mpi.DargDefault, 2) },
		"darray grid size":    func() (mpi.Datatype, error) { return darray1D(4, 0, mpi.DistribBlock, mpi.DargDefault, 2) },
		"darray small block":  func() (mpi.Datatype, error) { return darray1D(2, 0, mpi.DistribBlock, 3, 2) },
		"darray none on 2":    func() (mpi.Datatype, error) { return darray1D(2, 0, mpi.DistribNone, mpi.DargDefault, 2) },
		"darray bad distrib":  func() (mpi.Datatype, error) { return darray1D(2, 0, 9, mpi.DargDefault, 2) },
		"darray zero darg":    func() (mpi.Datatype, error) { return darray1D(2, 0, mpi.DistribCyclic, 0, 2) },
		"resized null":        func() (mpi.Datatype, error) { return mpi.TypeResized(mpi.DatatypeFromFint(0), 0, 8) },
		"dup null":            func() (mpi.Datatype, error) { return mpi.TypeDup(mpi.Datatype{}) },
		"contiguous null old": func() (mpi.Datatype, error) { return mpi.TypeContiguous(1, mpi.DatatypeFromFint(-1)) },
	}
	for name, build := range cases {
		dt, err := build()
		if !assert.Error(t, err, name) {
			_ = dt.Free()
			continue
		}
		assert.True(t, dt.IsNull(), name)
		assert.True(t, errors.Is(err, ioerr.ErrArg) || errors.Is(err, ioerr.ErrType), "%s: %v", name, err)
	}
}

func darray1D(size, rank int, d mpi.Distrib, darg, psize int) (mpi.Datatype, error) {
	return mpi.TypeDarray(size, rank, []int{10}, []mpi.Distrib{d}, []int{darg}, []int{psize}, mpi.OrderC, mpi.TypeInt())
}

func TestConstructorsCommitAndDup(t *testing.T) {
	s, err := mpi.TypeStruct([]int{1, 2}, []int64{0, 8}, []mpi.Datatype{mpi.TypeChar(), mpi.TypeInt()})
	require.NoError(t, err)
	d, err := mpi.TypeDup(s)
	require.NoError(t, err)
	require.NoError(t, s.Free()) // the dup stays valid
	size, err := d.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(9), size)
	require.NoError(t, d.Commit()) // committing again is allowed
	require.NoError(t, d.Free())
}
