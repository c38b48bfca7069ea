//go:build cgo

package mpi_test

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// counterKinds runs fn with the counter in an MPI window (one node) and
// served over TCP by rank 0 (forced, as across nodes, where both runs
// serve it).
func counterKinds(t *testing.T, fn func(t *testing.T, c mpi.Comm, served bool)) {
	for _, served := range []bool{false, true} {
		name := "window"
		if served {
			name = "served"
		}
		t.Run(name, func(t *testing.T) {
			was := mpi.ForceCounterServer(served)
			defer mpi.ForceCounterServer(was)
			mpirunner.Run(t, func(t *testing.T, c comm.Comm) { fn(t, c.(mpi.Comm), served) })
		})
	}
}

// Every rank adds at once (with several goroutines where the counter is
// served: its clients make no MPI call): the values before the adds are
// init, init+1, ... exactly once each over all ranks.
func TestCounterAdds(t *testing.T) {
	counterKinds(t, func(t *testing.T, c mpi.Comm, served bool) {
		const init, adds = 7, 300
		k, err := c.NewCounter(init)
		require.NoError(t, err)
		_, window := k.(*mpi.Counter)
		size, _ := sameHost(t, c)
		require.Equal(t, !served && size == c.Size(), window, "counter of type %T", k)
		goroutines := 1
		if served {
			goroutines = 4
		}
		mine := make([]byte, 8*adds*goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range adds {
					old, err := k.Add(1)
					if !assert.NoError(t, err) {
						return
					}
					binary.LittleEndian.PutUint64(mine[8*(g*adds+i):], uint64(old))
				}
			})
		}
		wg.Wait()
		all := make([]byte, len(mine)*c.Size())
		require.NoError(t, c.Allgather(mine, all))
		total := c.Size() * goroutines * adds
		seen := make([]int, total)
		for i := 0; i < len(all); i += 8 {
			old := int(binary.LittleEndian.Uint64(all[i:])) - init
			if assert.True(t, old >= 0 && old < total, "Add gave %d", old+init) {
				seen[old]++
			}
		}
		for v, n := range seen {
			assert.Equal(t, 1, n, "value %d seen before %d adds", v+init, n)
		}
		if c.Rank() == c.Size()-1 {
			require.NoError(t, k.Set(-5))
		}
		require.NoError(t, c.Barrier())
		v, err := k.Add(0)
		require.NoError(t, err)
		assert.EqualValues(t, -5, v, "after the last rank's Set(-5)")
		require.NoError(t, k.Free())
		_, err = k.Add(1)
		assert.ErrorContains(t, err, "freed")
	})
}

// The cost of one Add, from the last rank while the others wait, and from
// every rank at once, is logged for both kinds (go test -v -run
// TestCounterAddCost).
func TestCounterAddCost(t *testing.T) {
	counterKinds(t, func(t *testing.T, c mpi.Comm, served bool) {
		const adds = 2000
		k, err := c.NewCounter(0)
		require.NoError(t, err)
		defer func() { require.NoError(t, k.Free()) }()
		timed := func(on bool) time.Duration {
			require.NoError(t, c.Barrier())
			var took time.Duration
			if on {
				start := time.Now()
				for range adds {
					_, err := k.Add(1)
					require.NoError(t, err)
				}
				took = time.Since(start) / adds
			}
			out := []int64{0}
			require.NoError(t, c.AllreduceInt64([]int64{int64(took)}, out, comm.OpMax))
			return time.Duration(out[0])
		}
		alone := timed(c.Rank() == c.Size()-1)
		together := timed(true)
		t.Logf("one Add on %d ranks: %v from rank %d alone, %v (slowest rank) with every rank adding",
			c.Size(), alone, c.Size()-1, together)
	})
}
