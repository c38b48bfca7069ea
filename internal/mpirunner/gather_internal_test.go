//go:build cgo

package mpirunner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
)

// Rank 0 starts an agreement that the others join only later: it must
// give up with errAgreeTimeout instead of blocking, and the late ranks
// must still complete (rank 0's abandoned request stays alive).
func TestGatherWithinTimesOut(t *testing.T) {
	Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs at least 2 ranks")
		}
		late, err := c.Dup()
		require.NoError(t, err)
		if c.Rank() == 0 {
			// The others join only after the barrier below, which rank 0
			// reaches only once this returns: returning at all is giving up.
			_, err := gatherWithin(late, []byte{1}, 100*time.Millisecond)
			assert.ErrorIs(t, err, errAgreeTimeout)
		}
		require.NoError(t, c.Barrier())
		if c.Rank() != 0 {
			got, err := gatherWithin(late, []byte{1}, 30*time.Second)
			require.NoError(t, err)
			assert.Len(t, got, c.Size())
		}
		// Rank 0 makes progress for the late ranks inside this barrier.
		require.NoError(t, c.Barrier())
		require.NoError(t, late.Free())

		got, err := gatherWithin(c, []byte{byte(c.Rank())}, 30*time.Second)
		require.NoError(t, err)
		for r, b := range got {
			assert.Equal(t, byte(r), b)
		}
	})
}
