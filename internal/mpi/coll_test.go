//go:build cgo

package mpi_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// fill returns n bytes that encode who wrote them and where, so that any
// misplaced block shows up in a comparison.
func fill(n, from, to int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from*31 + to*7 + i)
	}
	return b
}

func TestBarrierAndBcast(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		require.NoError(t, c.Barrier())
		for root := range c.Size() {
			buf := make([]byte, 1000)
			if c.Rank() == root {
				copy(buf, fill(1000, root, 0))
			}
			require.NoError(t, c.Bcast(buf, root))
			assert.Equal(t, fill(1000, root, 0), buf, "bcast from root %d", root)
		}
		require.NoError(t, c.Bcast(nil, 0), "empty bcast")
	})
}

func TestAllgather(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		recv := make([]byte, 3*n)
		require.NoError(t, c.Allgather(fill(3, r, 0), recv))
		for p := range n {
			assert.Equal(t, fill(3, p, 0), recv[3*p:3*p+3], "block of rank %d", p)
		}
		require.NoError(t, c.Allgather(nil, nil), "zero-length allgather")
		require.NoError(t, c.Allgather([]byte{}, make([]byte, 0)))
	})
}

func TestAllgatherv(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		// Rank p sends p*5 bytes (rank 0 sends nothing); blocks are
		// placed in reverse rank order with a 2-byte gap between them.
		counts := make([]int, n)
		displs := make([]int, n)
		off := 0
		for p := n - 1; p >= 0; p-- {
			counts[p] = p * 5
			displs[p] = off
			off += counts[p] + 2
		}
		recv := bytes.Repeat([]byte{0xEE}, off)
		require.NoError(t, c.Allgatherv(fill(counts[r], r, 0), recv, counts, displs))
		for p := range n {
			assert.Equal(t, fill(counts[p], p, 0), recv[displs[p]:displs[p]+counts[p]], "block of rank %d", p)
			assert.Equal(t, []byte{0xEE, 0xEE}, recv[displs[p]+counts[p]:displs[p]+counts[p]+2], "gap after rank %d untouched", p)
		}
	})
}

func TestAlltoall(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		const blk = 17
		send := make([]byte, 0, n*blk)
		for to := range n {
			send = append(send, fill(blk, r, to)...)
		}
		recv := make([]byte, n*blk)
		require.NoError(t, c.Alltoall(send, recv, blk))
		for from := range n {
			assert.Equal(t, fill(blk, from, r), recv[from*blk:(from+1)*blk], "block from rank %d", from)
		}
		require.NoError(t, c.Alltoall(nil, nil, 0), "zero-size alltoall")
	})
}

func TestAlltoallvUnevenAndZero(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		// size(from, to) bytes go from rank "from" to rank "to"; every
		// third pair sends nothing, including some self pairs.
		size := func(from, to int) int {
			if (from+2*to)%3 == 0 {
				return 0
			}
			return 100*from + 10*to + 1
		}
		scounts, sdispls := make([]int, n), make([]int, n)
		rcounts, rdispls := make([]int, n), make([]int, n)
		// Send blocks in reverse destination order; receive blocks with
		// a 1-byte gap, to catch displacement mix-ups.
		var send []byte
		for to := n - 1; to >= 0; to-- {
			scounts[to], sdispls[to] = size(r, to), len(send)
			send = append(send, fill(scounts[to], r, to)...)
		}
		off := 0
		for from := range n {
			rcounts[from], rdispls[from] = size(from, r), off
			off += rcounts[from] + 1
		}
		recv := make([]byte, off)
		require.NoError(t, c.Alltoallv(send, scounts, sdispls, recv, rcounts, rdispls))
		for from := range n {
			got := recv[rdispls[from] : rdispls[from]+rcounts[from]]
			assert.Equal(t, fill(rcounts[from], from, r), got, "block from rank %d", from)
		}
		zeros := make([]int, n)
		require.NoError(t, c.Alltoallv(nil, zeros, zeros, nil, zeros, zeros), "all-zero alltoallv")
	})
}

func TestAllreduceInt64(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := int64(c.Size()), int64(c.Rank())
		in := []int64{r, -r, 1 << 40, r * r}
		out := make([]int64, len(in))
		require.NoError(t, c.AllreduceInt64(in, out, comm.OpSum))
		assert.Equal(t, []int64{n * (n - 1) / 2, -n * (n - 1) / 2, n << 40, (n - 1) * n * (2*n - 1) / 6}, out)
		require.NoError(t, c.AllreduceInt64(in, out, comm.OpMax))
		assert.Equal(t, []int64{n - 1, 0, 1 << 40, (n - 1) * (n - 1)}, out)
		require.NoError(t, c.AllreduceInt64(in, out, comm.OpMin))
		assert.Equal(t, []int64{0, -(n - 1), 1 << 40, 0}, out)
		assert.Equal(t, []int64{r, -r, 1 << 40, r * r}, in, "input untouched")

		same := []int64{r + 1, 5}
		require.NoError(t, c.AllreduceInt64(same, same, comm.OpSum), "in and out aliased")
		assert.Equal(t, []int64{n * (n + 1) / 2, 5 * n}, same)
		require.NoError(t, c.AllreduceInt64(nil, nil, comm.OpSum), "empty allreduce")
	})
}

func TestIallgatherPolled(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		n, r := c.Size(), c.Rank()
		recv := make([]byte, 8*n)
		req, err := c.Iallgather(fill(8, r, 1), recv)
		require.NoError(t, err)
		polls := 0
		for {
			done, err := req.Test()
			polls++
			if done {
				require.NoError(t, err)
				break
			}
		}
		t.Logf("Iallgather completed after %d polls", polls)
		done, err := req.Test()
		assert.True(t, done, "Test after completion stays true")
		assert.NoError(t, err)
		assert.NoError(t, req.Wait(), "Wait after completion")
		assert.Equal(t, 8*n, req.Count())
		for p := range n {
			assert.Equal(t, fill(8, p, 1), recv[8*p:8*p+8], "block of rank %d", p)
		}
		empty, err := c.Iallgather(nil, nil)
		require.NoError(t, err)
		require.NoError(t, empty.Wait(), "zero-length iallgather")
	})
}
