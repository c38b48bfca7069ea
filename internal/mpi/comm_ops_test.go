//go:build cgo

package mpi_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

func TestCommSplit(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		// Two groups by parity, each ordered by descending old rank.
		sub, err := c.Split(r%2, -r)
		require.NoError(t, err)
		require.NotNil(t, sub)
		defer func() { assert.NoError(t, sub.Free()) }()
		members := (n + 1 - r%2) / 2
		assert.Equal(t, members, sub.Size())
		assert.Equal(t, (n-1-r)/2, sub.Rank(), "descending key order")

		// The ranks of the new communicator, gathered, are the old ranks
		// of this parity in descending order.
		got := make([]byte, sub.Size())
		require.NoError(t, sub.Allgather([]byte{byte(r)}, got))
		for i, old := range got {
			assert.Equal(t, r%2, int(old)%2, "member %d has the same parity", i)
			if i > 0 {
				assert.Less(t, old, got[i-1])
			}
		}

		// Negative color: this rank is in no new communicator.
		none, err := c.Split(-1, 0)
		require.NoError(t, err)
		assert.Nil(t, none)
		// Only rank 0 left out; the others form one group.
		color := 0
		if r == 0 {
			color = -5
		}
		rest, err := c.Split(color, 0)
		require.NoError(t, err)
		if r == 0 {
			assert.Nil(t, rest)
		} else {
			require.NotNil(t, rest)
			assert.Equal(t, n-1, rest.Size())
			assert.Equal(t, r-1, rest.Rank())
			assert.NoError(t, rest.Free())
		}
	})
}

// sameHost returns how many ranks of c share this rank's hostname, and
// this rank's place among them.
func sameHost(t *testing.T, c comm.Comm) (size, rank int) {
	name, err := os.Hostname()
	require.NoError(t, err)
	mine := make([]byte, 256)
	copy(mine, name)
	all := make([]byte, len(mine)*c.Size())
	require.NoError(t, c.Allgather(mine, all))
	for q := range c.Size() {
		if bytes.Equal(all[q*len(mine):(q+1)*len(mine)], mine) {
			if q < c.Rank() {
				rank++
			}
			size++
		}
	}
	return size, rank
}

func TestSplitNodeAndDup(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		node, err := c.SplitNode()
		require.NoError(t, err)
		// The node's ranks are those with this rank's hostname (one
		// machine, or the nodes of the emulated cluster), in rank order.
		size, rank := sameHost(t, c)
		assert.Equal(t, size, node.Size())
		assert.Equal(t, rank, node.Rank())
		require.NoError(t, node.Barrier())
		require.NoError(t, node.Free())

		dup, err := c.Dup()
		require.NoError(t, err)
		assert.Equal(t, c.Size(), dup.Size())
		assert.Equal(t, c.Rank(), dup.Rank())

		// Messages on dup never match receives on c: a receive posted
		// on dup stays pending while the same tag travels on c. Nobody
		// sends on dup before the barrier.
		n, r := c.Size(), c.Rank()
		next, prev := (r+1)%n, (r+n-1)%n
		onDup := make([]byte, 1)
		dreq, err := dup.Irecv(onDup, prev, 11)
		require.NoError(t, err)
		onC := make([]byte, 1)
		creq, err := c.Irecv(onC, prev, 11)
		require.NoError(t, err)
		s1, err := c.Isend([]byte{'c'}, next, 11)
		require.NoError(t, err)
		require.NoError(t, comm.Waitall(creq, s1))
		assert.Equal(t, []byte{'c'}, onC)
		done, err := dreq.Test()
		require.NoError(t, err)
		assert.False(t, done, "a message on c completed a receive on dup")
		require.NoError(t, c.Barrier())
		s2, err := dup.Isend([]byte{'d'}, next, 11)
		require.NoError(t, err)
		require.NoError(t, comm.Waitall(dreq, s2))
		assert.Equal(t, []byte{'d'}, onDup)

		require.NoError(t, dup.Free())
		err = dup.Free()
		assert.ErrorContains(t, err, "already freed", "double free is refused")
	})
}

func TestFreeRefusesWorldAndApplicationComms(t *testing.T) {
	err := mpi.World().Free()
	assert.ErrorContains(t, err, "not created by collio")
	// A handle known only through its Fortran integer is the application's.
	w := mpi.CommFromFint(mpi.World().Fint())
	assert.Error(t, w.Free())
	assert.Equal(t, mpirunner.Size(), mpi.World().Size(), "WORLD still works")
}

func TestFintRoundTrip(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		w := mpi.World()
		assert.Equal(t, int32(0), w.Fint(), "WORLD's Fortran handle is 0")
		assert.Equal(t, w.Pointer(), mpi.CommFromFint(0).Pointer())

		mc := c.(mpi.Comm)
		f := mc.Fint()
		assert.NotEqual(t, int32(0), f)
		back := mpi.CommFromFint(f)
		assert.Equal(t, mc.Pointer(), back.Pointer())
		assert.Equal(t, c.Rank(), back.Rank())
		require.NoError(t, back.Barrier(), "the round-tripped handle is usable")

		assert.True(t, mpi.CommFromFint(1<<30).IsNull(), "unknown integer")
		assert.True(t, mpi.CommFromFint(-3).IsNull(), "negative integer")
	})
}
