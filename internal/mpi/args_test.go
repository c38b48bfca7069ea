//go:build cgo

package mpi_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// Bad arguments are refused before MPI sees them (MPI would abort or
// write outside a buffer), with a message naming the problem. All ranks
// make the same bad calls, so nothing is left half-done.
func TestArgumentErrors(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		zeros := make([]int, n)
		cases := []struct {
			name string
			err  error
			want string
		}{
			{"bcast root", c.Bcast(make([]byte, 4), n), "root"},
			{"bcast negative root", c.Bcast(nil, -1), "root"},
			{"allgather recv length", c.Allgather(make([]byte, 2), make([]byte, 2*n+1)), "receive buffer"},
			{"allgatherv counts length", c.Allgatherv(nil, nil, make([]int, n+1), make([]int, n+1)), "counts"},
			{"allgatherv past end", c.Allgatherv(make([]byte, 3), make([]byte, 3*n), constInts(n, 3), lastPastEnd(n)), "ends past"},
			{"allgatherv own count", c.Allgatherv(make([]byte, 2), make([]byte, 3*n), constInts(n, 3), strided(n, 3)), "this rank sends"},
			{"allgatherv negative", c.Allgatherv(nil, make([]byte, 3*n), negAt(n, r), strided(n, 3)), "negative"},
			{"alltoall lengths", c.Alltoall(make([]byte, n), make([]byte, n), 2), "want"},
			{"alltoall negative block", c.Alltoall(nil, nil, -1), "negative"},
			{"alltoallv counts length", c.Alltoallv(nil, make([]int, n+1), zeros, nil, zeros, zeros), "scounts"},
			{"alltoallv send past end", c.Alltoallv(make([]byte, n-1), constInts(n, 1), strided(n, 1), make([]byte, n), constInts(n, 1), strided(n, 1)), "send buffer"},
			{"alltoallv recv past end", c.Alltoallv(make([]byte, n), constInts(n, 1), strided(n, 1), make([]byte, n-1), constInts(n, 1), strided(n, 1)), "receive buffer"},
			{"alltoallv int32 displacement", c.Alltoallv(nil, zeros, bigAt(n), nil, zeros, zeros), "int count limit"},
			{"allreduce lengths", c.AllreduceInt64(make([]int64, 2), make([]int64, 3), comm.OpSum), "elements"},
			{"allreduce op", c.AllreduceInt64(nil, nil, comm.Op(42)), "unknown reduction op"},
			{"isend dest", errOf(c.Isend(nil, n, 0)), "peer"},
			{"isend any source", errOf(c.Isend(nil, comm.AnySource, 0)), "peer"},
			{"issend negative tag", errOf(c.Issend(nil, r, -2)), "tag"},
			{"irecv huge tag", errOf(c.Irecv(nil, r, math.MaxInt32+1)), "tag"},
			{"irecv source", errOf(c.Irecv(nil, -7, 0)), "peer"},
			{"iallgather lengths", errOf(c.Iallgather(make([]byte, 1), nil)), "receive buffer"},
			{"split color", errOf(c.Split(math.MaxInt32+1, 0)), "C int"},
		}
		for _, tc := range cases {
			if assert.Error(t, tc.err, tc.name) {
				assert.Contains(t, tc.err.Error(), tc.want, tc.name)
			}
		}
		// Failed starts return a nil interface, not a typed nil.
		req, err := c.Isend(nil, n, 0)
		assert.Error(t, err)
		assert.Nil(t, req)
		require.NoError(t, c.Barrier(), "the communicator still works")
	})
}

// Handles that are not communicators are refused without calling MPI.
func TestUnusableComms(t *testing.T) {
	var zero mpi.Comm
	assert.ErrorContains(t, zero.Barrier(), "zero Comm")
	assert.Equal(t, -1, zero.Rank())
	assert.Equal(t, 0, zero.Size())
	_, err := zero.Dup()
	assert.ErrorContains(t, err, "zero Comm")
	null := mpi.CommFromFint(1 << 30)
	require.True(t, null.IsNull())
	assert.ErrorContains(t, null.Bcast(nil, 0), "MPI_COMM_NULL")
	_, err = null.Isend(nil, 0, 0)
	assert.ErrorContains(t, err, "MPI_COMM_NULL")
	assert.ErrorContains(t, null.Free(), "MPI_COMM_NULL")
}

func errOf[T any](_ T, err error) error { return err }

// constInts is n copies of v.
func constInts(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// strided is 0, stride, 2*stride, ... (n values).
func strided(n, stride int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i * stride
	}
	return out
}

// lastPastEnd are 3-byte blocks whose last one ends one byte too far.
func lastPastEnd(n int) []int {
	d := strided(n, 3)
	d[n-1]++
	return d
}

// negAt has 3 everywhere but -1 at index r.
func negAt(n, r int) []int {
	v := constInts(n, 3)
	v[r] = -1
	return v
}

// bigAt is zeros with a last value that does not fit in an int32.
func bigAt(n int) []int {
	v := make([]int, n)
	v[n-1] = math.MaxInt32 + 1
	return v
}
