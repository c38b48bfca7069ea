//go:build cgo

package mpi_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// TestFor gives up at its deadline while a peer has not joined, leaving
// the request pending, and completes it once the peer joins.
func TestRequestTestFor(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		d, err := c.Dup()
		require.NoError(t, err)
		defer d.Free()
		send := []byte{byte(c.Rank())}
		recv := make([]byte, c.Size())
		if c.Rank() == 0 {
			req, err := d.Iallgather(send, recv)
			require.NoError(t, err)
			r, ok := req.(*mpi.Request)
			require.True(t, ok, "an MPI communicator's request is an *mpi.Request")
			// The others join only after the barrier below: TestFor must
			// give up on its own.
			done, err := r.TestFor(50 * time.Millisecond)
			require.NoError(t, err)
			require.False(t, done, "rank 1 has not joined yet")
			require.NoError(t, c.Barrier()) // now the others join
			done, err = r.TestFor(0)
			require.NoError(t, err)
			require.True(t, done)
		} else {
			require.NoError(t, c.Barrier())
			req, err := d.Iallgather(send, recv)
			require.NoError(t, err)
			require.NoError(t, req.Wait())
		}
		for r := range recv {
			require.Equal(t, byte(r), recv[r])
		}
	})
}
