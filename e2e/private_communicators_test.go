//go:build cgo

package e2e

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/commpool"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// Opens on one communicator reuse the private duplicate an earlier close
// left (package commpool); files open at once get their own; the pool
// keeps at most commpool.MaxIdle; freeing the application's communicator
// frees them all. The data written through reused duplicates is checked.
func TestOpenKeepsPrivateCommunicators(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		before := mpi.Created()
		user, err := c.Dup()
		require.NoError(t, err)
		open := func(name string) *adio.File {
			t.Helper()
			f, err := adio.Open(user, filepath.Join(dir, name), adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{})
			require.NoError(t, err)
			return f
		}
		const rec = 64
		writeCheck := func(f *adio.File, round int) {
			t.Helper()
			p := make([]byte, rec)
			for i := range p {
				p[i] = byte(round + user.Rank() + i)
			}
			n, err := f.WriteAtAll(adio.Bytes(p), int64(user.Rank()*rec))
			require.NoError(t, err)
			require.Equal(t, int64(rec), n)
			got := make([]byte, rec*user.Size())
			n, err = f.ReadAtAll(adio.Bytes(got), 0)
			require.NoError(t, err)
			require.Equal(t, int64(len(got)), n)
			for r := range user.Size() {
				for i := range rec {
					require.Equal(t, byte(round+r+i), got[r*rec+i], "round %d rank %d byte %d", round, r, i)
				}
			}
		}

		f := open("a")
		first := f.Comm()
		writeCheck(f, 0)
		require.NoError(t, f.Close())
		for round := 1; round <= 3; round++ {
			f = open("a")
			assert.True(t, first == f.Comm(), "round %d reuses the duplicate", round)
			writeCheck(f, round)
			require.NoError(t, f.Close())
		}
		assert.Equal(t, before+2, mpi.Created(), "the user's communicator and one duplicate")

		a, b := open("a"), open("b")
		// == on the handles: testify's deep equality looks through them.
		assert.True(t, a.Comm() != b.Comm(), "files open at once have their own")
		writeCheck(a, 10)
		writeCheck(b, 11)
		require.NoError(t, b.Close())
		require.NoError(t, a.Close())
		assert.Equal(t, before+3, mpi.Created())

		var many []*adio.File
		for i := range commpool.MaxIdle + 2 {
			many = append(many, open(fmt.Sprintf("m%d", i)))
		}
		for _, f := range many {
			require.NoError(t, f.Close())
		}
		assert.Equal(t, before+1+commpool.MaxIdle, mpi.Created(), "at most MaxIdle kept")

		require.NoError(t, user.Free())
		assert.Equal(t, before, mpi.Created(), "freeing the communicator frees what was kept with it")

		// Warm (collio's MPI_Init does it for WORLD): the first open finds
		// the duplicate ready; a second Warm with an idle entry does nothing.
		user, err = c.Dup()
		require.NoError(t, err)
		kept := false
		require.NoError(t, adio.Warm(user, false, func(dc comm.Comm, keep func(any, adio.Releaser)) error {
			keep("extra", releaser{&kept})
			return nil
		}))
		require.NoError(t, adio.Warm(user, false, nil))
		assert.Equal(t, before+2, mpi.Created(), "the user's communicator and the warmed duplicate")
		f = open("w")
		assert.Equal(t, before+2, mpi.Created(), "the first open made no duplicate")
		writeCheck(f, 20)
		require.NoError(t, f.Close())
		f = open("w")
		assert.Equal(t, before+2, mpi.Created(), "the next open reuses it from the pool")
		require.NoError(t, f.Close())
		require.NoError(t, user.Free())
		assert.True(t, kept, "what Warm's extra kept was released with the communicator")
		assert.Equal(t, before, mpi.Created())

		// A spare made for one communicator serves the first open on a
		// congruent one (IOR opens on a split of MPI_COMM_WORLD).
		require.NoError(t, adio.Warm(c, false, nil))
		split, err := c.Split(0, c.Rank())
		require.NoError(t, err)
		user = split
		f = open("s")
		assert.Equal(t, before+2, mpi.Created(), "the split and the spare, no new duplicate")
		require.NoError(t, f.Close())
		require.NoError(t, split.Free())
		assert.Equal(t, before, mpi.Created())
	})
}

// releaser records that it was released.
type releaser struct{ done *bool }

func (r releaser) Release() error {
	*r.done = true
	return nil
}
