//go:build cgo

package mpi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpi/cdatatypes"
	"github.com/collio/collio/layout"
)

// expandBlocks lists the source offset of every data byte, in typemap
// order: what MPI_Pack of one instance should read.
func expandBlocks(lt *layout.Type) []int64 {
	out := []int64{}
	for off, n := range lt.Blocks() {
		for i := range n {
			out = append(out, off+i)
		}
	}
	return out
}

// requireMatchesMPI decodes dt and checks it byte for byte against
// MPI_Pack, and its size and bounds against MPI's.
func requireMatchesMPI(t require.TestingT, name string, dt mpi.Datatype) *layout.Type {
	lt, err := dt.Layout()
	require.NoError(t, err, name)
	size, err := dt.Size()
	require.NoError(t, err, name)
	lb, ext, err := dt.Extent()
	require.NoError(t, err, name)
	require.Equal(t, size, lt.Size(), "%s: size", name)
	require.Equal(t, lb, lt.LB(), "%s: lb", name)
	require.Equal(t, ext, lt.Extent(), "%s: extent", name)
	want, err := cdatatypes.PackOffsets(dt)
	require.NoError(t, err, name)
	require.Equal(t, want, expandBlocks(lt), "%s: packed byte offsets", name)
	return lt
}

func TestLayoutMatchesPackForCTypes(t *testing.T) {
	types, err := cdatatypes.CTypes()
	require.NoError(t, err)
	defer cdatatypes.FreeCTypes(types)
	require.Len(t, types, 15+6+8) // 15 types, the darrays once per grid rank
	for _, ct := range types {
		requireMatchesMPI(t, ct.Name, ct.Type)
	}
}

// The darray pieces of all ranks of a grid cover the global array exactly
// once.
func TestLayoutDarraysTileTheArray(t *testing.T) {
	types, err := cdatatypes.CTypes()
	require.NoError(t, err)
	defer cdatatypes.FreeCTypes(types)
	for _, grid := range []struct {
		prefix string
		elems  int64 // global elements
		esize  int64
	}{
		{"darray BLOCK x CYCLIC(2) x NONE", 5 * 9 * 4, 4},
		{"darray CYCLIC(2) x BLOCK x CYCLIC", 7 * 5 * 3, 8},
	} {
		seen := make([]int, grid.elems*grid.esize)
		ranks := 0
		for _, ct := range types {
			if len(ct.Name) < len(grid.prefix) || ct.Name[:len(grid.prefix)] != grid.prefix {
				continue
			}
			ranks++
			lt, err := ct.Type.Layout()
			require.NoError(t, err, ct.Name)
			assert.Equal(t, grid.elems*grid.esize, lt.Extent(), ct.Name)
			for off, n := range lt.Blocks() {
				for i := off; i < off+n; i++ {
					seen[i]++
				}
			}
		}
		require.NotZero(t, ranks, grid.prefix)
		for i, c := range seen {
			require.Equal(t, 1, c, "%s: byte %d covered %d times", grid.prefix, i, c)
		}
	}
}

// int[4][5][6], block 2x3x4 at (1,1,1): exact segments (platform.md §5).
func TestLayoutSubarrayByHand(t *testing.T) {
	sizes, sub, starts := []int{4, 5, 6}, []int{2, 3, 4}, []int{1, 1, 1}
	c, err := mpi.TypeSubarray(sizes, sub, starts, mpi.OrderC, mpi.TypeInt())
	require.NoError(t, err)
	defer c.Free()
	lt := requireMatchesMPI(t, "C order", c)
	var want [][2]int64
	for i := int64(1); i <= 2; i++ {
		for j := int64(1); j <= 3; j++ {
			want = append(want, [2]int64{((i*5+j)*6 + 1) * 4, 16})
		}
	}
	assert.Equal(t, want, blockList(lt))
	assert.Equal(t, int64(480), lt.Extent())

	f, err := mpi.TypeSubarray(sizes, sub, starts, mpi.OrderFortran, mpi.TypeInt())
	require.NoError(t, err)
	defer f.Free()
	lt = requireMatchesMPI(t, "Fortran order", f)
	want = nil
	for k := int64(1); k <= 4; k++ {
		for j := int64(1); j <= 3; j++ {
			want = append(want, [2]int64{(1 + 4*(j+5*k)) * 4, 8})
		}
	}
	assert.Equal(t, want, blockList(lt))
}

func blockList(lt *layout.Type) [][2]int64 {
	var out [][2]int64
	for off, n := range lt.Blocks() {
		out = append(out, [2]int64{off, n})
	}
	return out
}

// A 512^3 double array with a 256^3 block stays compact: decoding must not
// expand its 65,536 rows (or 16 M elements).
func TestLayoutLargeSubarrayIsCompact(t *testing.T) {
	n, b := []int{512, 512, 512}, []int{256, 256, 256}
	dt, err := mpi.TypeSubarray(n, b, []int{128, 128, 128}, mpi.OrderC, mpi.TypeDouble())
	require.NoError(t, err)
	defer dt.Free()
	start := time.Now()
	lt, err := dt.Layout()
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("decoded in %v, footprint %d bytes", took, lt.Footprint())
	assert.Equal(t, int64(256*256*256*8), lt.Size())
	assert.Equal(t, int64(512*512*512*8), lt.Extent())
	assert.Less(t, lt.Footprint(), 16<<10)
}

func BenchmarkLayoutLargeSubarray(b *testing.B) {
	dt, err := mpi.TypeSubarray([]int{512, 512, 512}, []int{256, 256, 256}, []int{128, 128, 128}, mpi.OrderC, mpi.TypeDouble())
	require.NoError(b, err)
	defer dt.Free()
	for b.Loop() {
		if _, err := dt.Layout(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLayoutUnsupportedCombiner(t *testing.T) {
	f90, err := cdatatypes.CTypeF90Real()
	require.NoError(t, err)
	_, err = f90.Layout()
	require.Error(t, err)
	assert.ErrorIs(t, err, ioerr.ErrUnsupported)
	assert.Contains(t, err.Error(), "MPI_COMBINER_F90_REAL")
	assert.ErrorIs(t, f90.Free(), ioerr.ErrType, "F90 types belong to MPI")

	// A struct holding it names the path to the unsupported member.
	s, err := mpi.TypeStruct([]int{1, 1}, []int64{0, 16}, []mpi.Datatype{mpi.TypeInt(), f90})
	require.NoError(t, err)
	defer s.Free()
	_, err = s.Layout()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MPI_COMBINER_STRUCT / MPI_COMBINER_F90_REAL")
}

// Open MPI 4.1.4 treats a stride of exactly -1 byte as contiguous: it
// packs vector(2,1,-1,MPI_BYTE) from bytes 0 and 1 and reports lb 0, where
// MPI-3.1 puts the bytes at 0 and -1. Layout follows the standard, and the
// check against MPI's bounds turns the disagreement into an error instead
// of a silently different typemap.
func TestLayoutRefusesOpenMPIStrideBug(t *testing.T) {
	v, err := mpi.TypeVector(2, 1, -1, mpi.Byte())
	require.NoError(t, err)
	defer v.Free()
	lb, _, err := v.Extent()
	require.NoError(t, err)
	if lb == -1 {
		requireMatchesMPI(t, "vector(2,1,-1,byte)", v) // a fixed MPI
		return
	}
	_, err = v.Layout()
	require.Error(t, err)
	assert.ErrorIs(t, err, ioerr.ErrType)
	assert.Contains(t, err.Error(), "MPI_COMBINER_VECTOR")
	t.Log(err)
}

// A recipe of a list type (indexed, hindexed, their _block forms, struct)
// builds a type equal to the original after the program freed it: the same
// layout, size, bounds and packed bytes. Other types give no recipe.
func TestLayoutRecipeRebuildsFreedListTypes(t *testing.T) {
	types, err := cdatatypes.CTypes()
	require.NoError(t, err)
	lists := map[string]bool{"indexed": true, "indexed_block(short)": true, "hindexed(double)": true,
		"hindexed_block negative displacement": true, "struct char/double/int[3]/vector at -40": true}
	seen := 0
	for _, ct := range types {
		want := requireMatchesMPI(t, ct.Name, ct.Type)
		wantPack, err := cdatatypes.PackOffsets(ct.Type)
		require.NoError(t, err, ct.Name)
		lt, r, err := ct.Type.LayoutRecipe()
		require.NoError(t, err, ct.Name)
		require.Equal(t, want.String(), lt.String(), ct.Name)
		if !lists[ct.Name] {
			require.Nil(t, r, "%s: a recipe for a type that is not a list", ct.Name)
			_ = ct.Type.Free() // predefined ones are refused, not freed
			continue
		}
		require.NotNil(t, r, ct.Name)
		seen++
		require.NoError(t, ct.Type.Free(), ct.Name) // as PnetCDF does right after set_view
		got, err := r.Build()
		require.NoError(t, err, ct.Name)
		again := requireMatchesMPI(t, ct.Name+" rebuilt", got)
		require.Equal(t, want.String(), again.String(), ct.Name)
		gotPack, err := cdatatypes.PackOffsets(got)
		require.NoError(t, err, ct.Name)
		require.Equal(t, wantPack, gotPack, ct.Name)
		require.NoError(t, got.Free())
		r.Free()
	}
	require.Equal(t, len(lists), seen)
}
