package comm

import (
	"fmt"
	"sync/atomic"
	"testing"
)

func TestCollectivesContent(t *testing.T) {
	for _, sz := range testSizes {
		t.Run(fmt.Sprintf("n%d_node%d", sz.n, sz.nodeSize), func(t *testing.T) {
			var entered atomic.Int64
			runRanks(t, sz.n, sz.nodeSize, func(c Comm) error {
				checks := []func(Comm) error{
					func(c Comm) error { return testBarrier(c, &entered) },
					testBcast, testAllgather, testAllgatherv, testAlltoall,
					testAlltoallv, testAllreduce, testIallgather,
				}
				for _, check := range checks {
					if err := check(c); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// testBarrier: nobody leaves before everybody has entered.
func testBarrier(c Comm, entered *atomic.Int64) error {
	entered.Add(1)
	if err := c.Barrier(); err != nil {
		return err
	}
	if got := entered.Load(); got < int64(c.Size()) {
		return fmt.Errorf("left barrier with %d of %d ranks entered", got, c.Size())
	}
	return c.Barrier() // nobody touches entered again before all have read it
}

func testBcast(c Comm) error {
	for root := range c.Size() {
		buf := make([]byte, 5)
		if c.Rank() == root {
			for i := range buf {
				buf[i] = pattern(root, 0, i)
			}
		}
		if err := c.Bcast(buf, root); err != nil {
			return err
		}
		want := make([]byte, 5)
		for i := range want {
			want[i] = pattern(root, 0, i)
		}
		if err := sameBytes(fmt.Sprintf("bcast from %d", root), buf, want); err != nil {
			return err
		}
	}
	return nil
}

func testAllgather(c Comm) error {
	const m = 3
	send := make([]byte, m)
	for i := range send {
		send[i] = pattern(c.Rank(), 0, i)
	}
	recv := make([]byte, m*c.Size())
	if err := c.Allgather(send, recv); err != nil {
		return err
	}
	want := make([]byte, 0, len(recv))
	for r := range c.Size() {
		for i := range m {
			want = append(want, pattern(r, 0, i))
		}
	}
	return sameBytes("allgather", recv, want)
}

// testAllgatherv: rank r contributes r%4 bytes, placed in reverse rank
// order with a one-byte gap after each block.
func testAllgatherv(c Comm) error {
	n := c.Size()
	counts, displs := make([]int, n), make([]int, n)
	total := 0
	for r := n - 1; r >= 0; r-- {
		counts[r], displs[r] = r%4, total
		total += r%4 + 1
	}
	send := make([]byte, counts[c.Rank()])
	for i := range send {
		send[i] = pattern(c.Rank(), 1, i)
	}
	recv := make([]byte, total)
	if err := c.Allgatherv(send, recv, counts, displs); err != nil {
		return err
	}
	want := make([]byte, total)
	for r := range n {
		for i := range counts[r] {
			want[displs[r]+i] = pattern(r, 1, i)
		}
	}
	return sameBytes("allgatherv", recv, want)
}

func testAlltoall(c Comm) error {
	const blk = 2
	n, me := c.Size(), c.Rank()
	send, recv := make([]byte, n*blk), make([]byte, n*blk)
	for to := range n {
		for i := range blk {
			send[to*blk+i] = pattern(me, to, i)
		}
	}
	if err := c.Alltoall(send, recv, blk); err != nil {
		return err
	}
	want := make([]byte, n*blk)
	for from := range n {
		for i := range blk {
			want[from*blk+i] = pattern(from, me, i)
		}
	}
	return sameBytes("alltoall", recv, want)
}

// testAlltoallv: rank i sends (i+j)%3 bytes to rank j, blocks laid out
// in reverse order on the send side.
func testAlltoallv(c Comm) error {
	n, me := c.Size(), c.Rank()
	cnt := func(from, to int) int { return (from + to) % 3 }
	scounts, sdispls := make([]int, n), make([]int, n)
	rcounts, rdispls := make([]int, n), make([]int, n)
	stotal, rtotal := 0, 0
	for j := n - 1; j >= 0; j-- {
		scounts[j], sdispls[j] = cnt(me, j), stotal
		stotal += scounts[j]
	}
	for j := range n {
		rcounts[j], rdispls[j] = cnt(j, me), rtotal
		rtotal += rcounts[j]
	}
	send, recv := make([]byte, stotal), make([]byte, rtotal)
	for j := range n {
		for i := range scounts[j] {
			send[sdispls[j]+i] = pattern(me, j, i)
		}
	}
	if err := c.Alltoallv(send, scounts, sdispls, recv, rcounts, rdispls); err != nil {
		return err
	}
	want := make([]byte, rtotal)
	for j := range n {
		for i := range rcounts[j] {
			want[rdispls[j]+i] = pattern(j, me, i)
		}
	}
	return sameBytes("alltoallv", recv, want)
}

func testAllreduce(c Comm) error {
	n, me := int64(c.Size()), int64(c.Rank())
	in := []int64{me, -me, 1, me * me}
	wants := map[Op][]int64{
		OpSum: {n * (n - 1) / 2, -n * (n - 1) / 2, n, (n - 1) * n * (2*n - 1) / 6},
		OpMax: {n - 1, 0, 1, (n - 1) * (n - 1)},
		OpMin: {0, -(n - 1), 1, 0},
	}
	for _, op := range []Op{OpSum, OpMax, OpMin} {
		out := make([]int64, len(in))
		if err := c.AllreduceInt64(in, out, op); err != nil {
			return err
		}
		if fmt.Sprint(out) != fmt.Sprint(wants[op]) {
			return fmt.Errorf("allreduce %s: got %v, want %v", opString(op), out, wants[op])
		}
	}
	// in and out may be the same slice.
	v := []int64{1}
	if err := c.AllreduceInt64(v, v, OpSum); err != nil {
		return err
	}
	if v[0] != n {
		return fmt.Errorf("in-place allreduce: got %d, want %d", v[0], n)
	}
	return nil
}

// testIallgather polls Test, as deadline-bounded agreement code does.
func testIallgather(c Comm) error {
	send := []byte{byte(c.Rank()), 42}
	recv := make([]byte, 2*c.Size())
	req, err := c.Iallgather(send, recv)
	if err != nil {
		return err
	}
	for {
		done, err := req.Test()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	if req.Count() != len(recv) {
		return fmt.Errorf("iallgather count %d, want %d", req.Count(), len(recv))
	}
	want := make([]byte, 0, len(recv))
	for r := range c.Size() {
		want = append(want, byte(r), 42)
	}
	return sameBytes("iallgather", recv, want)
}

// TestConsecutiveCollectivesReuseBuffers runs many back-to-back
// collectives that overwrite the same buffers; under -race this catches
// a rank reusing a buffer another rank is still reading.
func TestConsecutiveCollectivesReuseBuffers(t *testing.T) {
	runRanks(t, 7, 3, func(c Comm) error {
		n, me := c.Size(), c.Rank()
		send, recv := make([]byte, n), make([]byte, n)
		for iter := range 200 {
			for j := range send {
				send[j] = byte(iter + me)
			}
			if err := c.Alltoall(send, recv, 1); err != nil {
				return err
			}
			for j := range recv {
				if recv[j] != byte(iter+j) {
					return fmt.Errorf("iter %d: block from %d is %d", iter, j, recv[j])
				}
			}
			buf := []byte{byte(iter)}
			if me != iter%n {
				buf[0] = 0
			}
			if err := c.Bcast(buf, iter%n); err != nil {
				return err
			}
			if buf[0] != byte(iter) {
				return fmt.Errorf("iter %d: bcast gave %d", iter, buf[0])
			}
		}
		return nil
	})
}

// TestIallgatherOverlapsOtherCollectives keeps a nonblocking collective
// open across blocking ones, which must not disturb its sequence slot.
func TestIallgatherOverlapsOtherCollectives(t *testing.T) {
	runRanks(t, 5, 0, func(c Comm) error {
		recv := make([]byte, c.Size())
		req, err := c.Iallgather([]byte{byte(c.Rank() + 10)}, recv)
		if err != nil {
			return err
		}
		for range 10 {
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		if err := req.Wait(); err != nil {
			return err
		}
		return sameBytes("iallgather", recv, []byte{10, 11, 12, 13, 14})
	})
}
