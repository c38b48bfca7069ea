//go:build cgo

package mpi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/mpi"
)

// TestMain (mpirunner.Main) has initialised MPI; a second Init must not
// re-initialise it and must report the level in force.
func TestInitTwiceIsNoop(t *testing.T) {
	require.True(t, mpi.Initialized())
	require.False(t, mpi.Finalized())
	p1, err := mpi.Init()
	require.NoError(t, err)
	p2, err := mpi.Init()
	require.NoError(t, err)
	assert.Equal(t, p1, p2)
	assert.Equal(t, mpi.ThreadMultiple, p1, "Open MPI here provides MULTIPLE")
	assert.True(t, mpi.OwnsMPI(), "mpirunner.Main initialised MPI through this package")
	assert.Equal(t, "MPI_THREAD_MULTIPLE", p1.String())
	assert.Equal(t, "ThreadLevel(9)", mpi.ThreadLevel(9).String())
}

func TestWtimeAndProcessorName(t *testing.T) {
	t0 := mpi.Wtime()
	t1 := mpi.Wtime()
	assert.GreaterOrEqual(t, t1, t0)
	name, err := mpi.ProcessorName()
	require.NoError(t, err)
	assert.NotEmpty(t, name)
}
