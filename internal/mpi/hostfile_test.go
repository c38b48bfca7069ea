//go:build cgo

package mpi_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

func mpiComm(t *testing.T, c comm.Comm) mpi.Comm {
	mc, ok := c.(mpi.Comm)
	require.True(t, ok, "mpirunner.Run should pass an mpi.Comm, got %T", c)
	return mc
}

// Each rank owns a 4x3 column block of a 4 x 3P int array: its file view
// is a subarray, so its part of the file is noncontiguous.
func TestHostFileSubarrayViewRoundTrip(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		rank, nprocs := c.Rank(), c.Size()
		t.Logf("%d ranks", nprocs)
		path := filepath.Join(mpirunner.TempDir(t, c), "host.dat")
		const rows, cols = 4, 3
		view, err := mpi.TypeSubarray([]int{rows, cols * nprocs}, []int{rows, cols}, []int{0, cols * rank}, mpi.OrderC, mpi.TypeInt())
		require.NoError(t, err)
		defer view.Free()

		f, err := mpi.HostOpen(mpiComm(t, c), path, mpi.ModeCreate|mpi.ModeRdWr, map[string]string{"cb_buffer_size": "65536"})
		require.NoError(t, err)
		require.NoError(t, f.SetView(0, mpi.TypeInt(), view, "native", nil))

		out := make([]byte, rows*cols*4)
		for i := range rows * cols {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(1000*rank+i))
		}
		n, err := f.WriteAtAll(0, out, rows*cols, mpi.TypeInt())
		require.NoError(t, err)
		assert.Equal(t, len(out), n)
		require.NoError(t, f.Sync())

		in := make([]byte, len(out))
		n, err = f.ReadAtAll(0, in, rows*cols, mpi.TypeInt())
		require.NoError(t, err)
		assert.Equal(t, len(in), n)
		assert.Equal(t, out, in)

		size, err := f.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(rows*cols*nprocs*4), size)
		_, err = f.Info()
		assert.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, c.Barrier())

		if rank == 0 {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Len(t, data, rows*cols*nprocs*4)
			for row := range rows {
				for col := range cols * nprocs {
					owner, i := col/cols, row*cols+col%cols
					got := binary.LittleEndian.Uint32(data[4*(row*cols*nprocs+col):])
					assert.Equal(t, uint32(1000*owner+i), got, "row %d col %d", row, col)
				}
			}
		}
		require.NoError(t, c.Barrier())
	})
}

func TestHostFileIndependentAndSize(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "ind.dat")
		f, err := mpi.HostOpen(mpiComm(t, c), path, mpi.ModeCreate|mpi.ModeRdWr, nil)
		require.NoError(t, err)
		// A vector memory type: every other int of buf goes to the file.
		mem, err := mpi.TypeVector(4, 1, 2, mpi.TypeInt())
		require.NoError(t, err)
		defer mem.Free()
		buf := make([]byte, 7*4)
		for i := range 7 {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(10*c.Rank()+i))
		}
		n, err := f.WriteAt(int64(16*c.Rank()), buf, 1, mem)
		require.NoError(t, err)
		assert.Equal(t, 16, n)
		require.NoError(t, c.Barrier())
		got := make([]byte, 16)
		n, err = f.ReadAt(int64(16*c.Rank()), got, 16, mpi.Byte())
		require.NoError(t, err)
		assert.Equal(t, 16, n)
		for i := range 4 {
			assert.Equal(t, uint32(10*c.Rank()+2*i), binary.LittleEndian.Uint32(got[4*i:]))
		}
		require.NoError(t, f.SetSize(1000))
		size, err := f.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(1000), size)
		require.NoError(t, f.Close())
		if c.Rank() == 0 {
			require.NoError(t, mpi.HostDelete(path))
			_, err := os.Stat(path)
			assert.True(t, os.IsNotExist(err))
		}
		require.NoError(t, c.Barrier())
	})
}

func TestHostFileErrors(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		missing := filepath.Join(dir, "missing.dat")
		_, err := mpi.HostOpen(mpiComm(t, c), missing, mpi.ModeRdOnly, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), missing)
		assert.ErrorIs(t, err, ioerr.ErrNotFound, "MPI_ERR_NO_SUCH_FILE maps to ErrNotFound")

		err = mpi.HostDelete(missing + ".other")
		assert.Error(t, err)

		path := filepath.Join(dir, "e.dat")
		f, err := mpi.HostOpen(mpiComm(t, c), path, mpi.ModeCreate|mpi.ModeWrOnly, nil)
		require.NoError(t, err)
		// Checked in Go, on every rank alike, before MPI sees them.
		_, err = f.WriteAt(0, make([]byte, 7), 2, mpi.TypeInt())
		assert.ErrorIs(t, err, ioerr.ErrArg)
		_, err = f.WriteAt(0, make([]byte, 8), -1, mpi.TypeInt())
		assert.ErrorIs(t, err, ioerr.ErrArg)
		_, err = f.WriteAt(-4, make([]byte, 8), 2, mpi.TypeInt())
		assert.ErrorIs(t, err, ioerr.ErrArg)
		_, err = f.WriteAt(0, make([]byte, 8), 1, mpi.Datatype{})
		assert.ErrorIs(t, err, ioerr.ErrType)
		assert.Error(t, f.SetView(0, mpi.TypeInt(), mpi.Datatype{}, "", nil))
		// Reading a write-only file: MPI's own error comes back as a value.
		_, err = f.ReadAt(0, make([]byte, 4), 1, mpi.TypeInt())
		assert.Error(t, err)
		require.NoError(t, f.Close())

		assert.ErrorIs(t, f.Close(), ioerr.ErrBadFile)
		_, err = f.Size()
		assert.ErrorIs(t, err, ioerr.ErrBadFile)
		_, err = (*mpi.HostFile)(nil).Size()
		assert.ErrorIs(t, err, ioerr.ErrBadFile)
	})
}

func TestHostFileBufferCheckAllowsSparseTypes(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "sparse.dat")
		f, err := mpi.HostOpen(mpiComm(t, c), path, mpi.ModeCreate|mpi.ModeRdWr|mpi.ModeDeleteOnClose, nil)
		require.NoError(t, err)
		defer func() { require.NoError(t, f.Close()) }()
		// The buffer must cover the data of every instance, not
		// count*extent: a resized int with extent 16 has instances at 0
		// and 16, data [0,4) and [16,20), so 20 bytes suffice for two.
		r, err := mpi.TypeResized(mpi.TypeInt(), 0, 16)
		require.NoError(t, err)
		defer r.Free()
		_, err = f.WriteAt(int64(64*c.Rank()), make([]byte, 20), 2, r)
		assert.NoError(t, err)
		_, err = f.WriteAt(int64(64*c.Rank()), make([]byte, 19), 2, r)
		assert.ErrorIs(t, err, ioerr.ErrArg)
	})
}
