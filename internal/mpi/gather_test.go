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

// AllgatherP2P puts every rank's block in rank order on every rank, for
// every communicator size up to the job's (powers of two and others) and
// block sizes from one byte up, with and without a deadline.
func TestAllgatherP2P(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		world := c.(mpi.Comm)
		for size := 1; size <= c.Size(); size++ {
			color := 0
			if c.Rank() >= size {
				color = 1
			}
			sub, err := world.SplitComm(color, c.Rank())
			require.NoError(t, err)
			if color == 0 {
				n, r := sub.Size(), sub.Rank()
				for _, b := range []int{1, 3, 128, 70000} {
					for _, d := range []time.Duration{0, time.Minute} {
						recv := make([]byte, n*b)
						done, err := sub.AllgatherP2P(fill(b, r, 7), recv, d)
						require.NoError(t, err)
						require.True(t, done)
						for p := range n {
							require.Equal(t, fill(b, p, 7), recv[b*p:b*(p+1)], "%d ranks, %d bytes: block of rank %d", n, b, p)
						}
					}
				}
				// One array holding both, as adio's call records do.
				buf := make([]byte, 16*(1+n))
				copy(buf, fill(16, r, 9))
				done, err := sub.AllgatherP2P(buf[:16], buf[16:], time.Minute)
				require.NoError(t, err)
				require.True(t, done)
				for p := range n {
					require.Equal(t, fill(16, p, 9), buf[16*(p+1):16*(p+2)], "one array: block of rank %d", p)
				}
				done, err = sub.AllgatherP2P(nil, nil, 0)
				require.NoError(t, err)
				require.True(t, done, "nothing to gather")
			}
			require.NoError(t, sub.Free())
		}
	})
}

// AllgatherP2P gives up at its deadline while a peer has not joined.
func TestAllgatherP2PGivesUp(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		d, err := c.(mpi.Comm).DupComm()
		require.NoError(t, err)
		// d is left unfreed: rank 0's messages stay pending on it.
		if c.Rank() == 0 {
			start := time.Now()
			done, err := d.AllgatherP2P([]byte{1}, make([]byte, c.Size()), 100*time.Millisecond)
			require.NoError(t, err)
			require.False(t, done, "the others never joined")
			require.Less(t, time.Since(start), 10*time.Second)
		}
		require.NoError(t, c.Barrier())
	})
}
