//go:build cgo

package mpirunner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

var (
	previousComm comm.Comm // the communicator TestRunGivesPrivateComm ran on
	previousDir  string    // the directory TestTempDirIsShared used
)

func TestWorld(t *testing.T) {
	assert.Equal(t, mpi.World().Rank(), mpirunner.Rank())
	assert.Equal(t, mpi.World().Size(), mpirunner.Size())
	assert.Equal(t, mpirunner.Size(), mpirunner.World().Size())
	assert.GreaterOrEqual(t, mpirunner.Size(), 1)
}

func TestRunGivesPrivateComm(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		assert.Equal(t, mpirunner.Rank(), c.Rank())
		assert.Equal(t, mpirunner.Size(), c.Size())
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
			mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
				sum := []int64{int64(c.Rank())}
				require.NoError(t, c.AllreduceInt64(sum, sum, comm.OpSum))
				n := int64(c.Size())
				assert.Equal(t, n*(n-1)/2, sum[0])
			})
		})
	}
}

func TestTempDirIsShared(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
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
