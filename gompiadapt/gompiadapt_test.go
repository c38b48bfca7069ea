//go:build cgo

package gompiadapt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	gompi "github.com/sbromberger/gompi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio"
	"github.com/collio/collio/gompiadapt"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// TestMain initialises MPI through mpirunner (not gompi.Start, whose Stop
// would finalise an MPI that mpirunner finalises too); gompi communicators
// are then built with gompi.NewCommunicator, which only needs MPI running.
func TestMain(m *testing.M) { mpirunner.Main(m) }

// checkpoint stops every rank if the test failed on any rank, so that no
// rank is left waiting in a collective that a failed rank skipped.
func checkpoint(t *testing.T, c comm.Comm) {
	t.Helper()
	var bad int64
	if t.Failed() {
		bad = 1
	}
	out := []int64{0}
	require.NoError(t, c.AllreduceInt64([]int64{bad}, out, comm.OpMax))
	if out[0] != 0 {
		t.FailNow()
	}
}

func block(rank, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rank*53 + i*7 + 1)
	}
	return b
}

func TestFromGompiWorld(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		g := gompi.NewCommunicator(nil)
		fc := gompiadapt.FromGompi(g)
		if assert.NotNil(t, fc) {
			assert.Equal(t, mpirunner.Rank(), fc.Rank())
			assert.Equal(t, mpirunner.Size(), fc.Size())
			assert.Equal(t, g.Rank(), fc.Rank())
			assert.Equal(t, g.Size(), fc.Size())
			mc, ok := fc.(mpi.Comm)
			assert.True(t, ok, "FromGompi gave %T, want an MPI communicator", fc)
			assert.Equal(t, mpi.World().Pointer(), mc.Pointer(), "FromGompi(NewCommunicator(nil)) is not MPI_COMM_WORLD")
		}
		checkpoint(t, c)

		// collio works on it: every rank writes its block collectively.
		const n = 1000
		path := filepath.Join(mpirunner.TempDir(t, c), "world.dat")
		f, err := collio.Open(fc, path, collio.ModeCreate|collio.ModeWrOnly, nil)
		require.NoError(t, err) // collective: every rank gets the same outcome
		w, err := f.WriteAtAll(block(fc.Rank(), n), int64(fc.Rank()*n))
		require.NoError(t, err)
		assert.Equal(t, n, w)
		require.NoError(t, f.Close())
		require.NoError(t, c.Barrier())

		data, err := os.ReadFile(path)
		if assert.NoError(t, err) && assert.Len(t, data, n*fc.Size()) {
			for r := range fc.Size() {
				assert.True(t, bytes.Equal(block(r, n), data[r*n:(r+1)*n]), "block of rank %d", r)
			}
		}
	})
}

func TestToGompiSplit(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		r := c.Rank()
		// Two halves (even and odd ranks), each in reverse rank order, so
		// that the new ranks differ from the old.
		s, err := c.Split(r%2, -r)
		require.NoError(t, err)
		require.NotNil(t, s)
		t.Cleanup(func() { s.Free() })
		var members []int
		for q := c.Size() - 1; q >= 0; q-- {
			if q%2 == r%2 {
				members = append(members, q)
			}
		}
		require.Equal(t, len(members), s.Size())
		require.Equal(t, slices.Index(members, r), s.Rank())

		g, err := gompiadapt.ToGompi(s)
		if assert.NoError(t, err) {
			assert.Equal(t, s.Rank(), g.Rank())
			assert.Equal(t, s.Size(), g.Size())
			assert.Positive(t, g.MaxTag)
		}
		checkpoint(t, c)

		orig := []int64{int64(r + 1), 1}
		sum := make([]int64, 2)
		require.NoError(t, g.AllreduceInt64s(sum, orig, gompi.OpSum, 0))
		var want int64
		for _, q := range members {
			want += int64(q + 1)
		}
		assert.Equal(t, []int64{want, int64(len(members))}, sum, "sum over the ranks of my half %v", members)
		mx := make([]int64, 1)
		require.NoError(t, g.AllreduceInt64s(mx, orig[:1], gompi.OpMax, 0))
		assert.Equal(t, int64(members[0]+1), mx[0])

		// Back to collio: the very same communicator.
		back := gompiadapt.FromGompi(g)
		if assert.NotNil(t, back) {
			assert.Equal(t, s.(mpi.Comm).Pointer(), back.(mpi.Comm).Pointer())
			assert.Equal(t, s.Rank(), back.Rank())
		}
	})
}

func TestConversionErrors(t *testing.T) {
	assert.Nil(t, gompiadapt.FromGompi(nil))
	assert.Nil(t, gompiadapt.FromGompi(&gompi.Communicator{}), "a zero gompi Communicator has no MPI communicator")

	_, err := gompiadapt.ToGompi(nil)
	assert.True(t, errors.Is(err, collio.ErrArg), "ToGompi(nil): %v", err)

	// An in-memory communicator has no MPI communicator behind it.
	err = comm.RunWorld(2, 0, func(c comm.Comm) error {
		g, err := gompiadapt.ToGompi(c)
		if g != nil || !errors.Is(err, collio.ErrArg) {
			return errors.Join(errors.New("ToGompi of an in-memory communicator did not fail with ErrArg"), err)
		}
		return nil
	})
	assert.NoError(t, err)
}
