//go:build cgo

package mpi

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Counts that MPI's int cannot hold are refused, never truncated.
func TestCountLimits(t *testing.T) {
	n, err := cCount(math.MaxInt32, "x", "MPI_Test")
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt32, int(n))
	_, err = cCount(math.MaxInt32+1, "send length", "MPI_Allgather")
	assert.ErrorContains(t, err, "MPI_Allgather: send length is 2147483648 bytes, more than MPI's int count limit")
	_, err = cCount(-1, "block size", "MPI_Alltoall")
	assert.ErrorContains(t, err, "negative")
	assert.Nil(t, bufPtr(nil))
	assert.Nil(t, bufPtr([]byte{}))
	assert.NotNil(t, bufPtr(make([]byte, 1)))
}
