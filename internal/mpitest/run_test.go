//go:build cgo

package mpitest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpitest"
)

var (
	previousComm comm.Comm // the communicator TestRunGivesPrivateComm ran on
	previousDir  string    // the directory TestTempDirIsShared used
)

func TestWorld(t *testing.T) {
	assert.Equal(t, mpi.World().Rank(), mpitest.Rank())
	assert.Equal(t, mpi.World().Size(), mpitest.Size())
	assert.Equal(t, mpitest.Size(), mpitest.World().Size())
	assert.GreaterOrEqual(t, mpitest.Size(), 1)
}

func TestRunGivesPrivateComm(t *testing.T) {
	mpitest.Run(t, func(t *testing.T, c comm.Comm) {
		assert.Equal(t, mpitest.Rank(), c.Rank())
		assert.Equal(t, mpitest.Size(), c.Size())
		mc, ok := c.(mpi.Comm)
		require.True(t, ok)
		assert.NotEqual(t, mpi.World().Fint(), mc.Fint(), "not WORLD itself")
		require.NoError(t, c.Barrier())
		previousComm = c
	})
}

func TestRunFreedThePreviousComm(t *testing.T) {
	require.NotNil(t, previousComm, "runs after TestRunGivesPrivateComm")
	assert.ErrorContains(t, previousComm.Free(), "already freed")
}

func TestRunAgreesWhenAllPass(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			mpitest.Run(t, func(t *testing.T, c comm.Comm) {
				sum := []int64{int64(c.Rank())}
				require.NoError(t, c.AllreduceInt64(sum, sum, comm.OpSum))
				n := int64(c.Size())
				assert.Equal(t, n*(n-1)/2, sum[0])
			})
		})
	}
}

func TestTempDirIsShared(t *testing.T) {
	mpitest.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpitest.TempDir(t, c)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(c.Rank())), []byte("x"), 0o644))
		require.NoError(t, c.Barrier())
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, entries, c.Size(), "one file per rank in the same directory")
		previousDir = dir
	})
}

func TestTempDirWasRemoved(t *testing.T) {
	require.NotEmpty(t, previousDir, "runs after TestTempDirIsShared")
	_, err := os.Stat(previousDir)
	assert.True(t, os.IsNotExist(err), "rank 0 removed %s: %v", previousDir, err)
}
