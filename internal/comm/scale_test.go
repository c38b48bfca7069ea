package comm

import (
	"fmt"
	"testing"
	"time"
)

// TestScale1024Ranks runs every collective and a ring of messages over
// 1024 ranks in virtual nodes of 16. Timings are logged, never asserted.
func TestScale1024Ranks(t *testing.T) {
	const n, nodeSize = 1024, 16
	start := time.Now()
	steps := []struct {
		name string
		run  func(c Comm) error
	}{
		{"barrier", func(c Comm) error { return c.Barrier() }},
		{"bcast", testBcastFrom(n / 2)},
		{"allgather", testAllgather},
		{"allgatherv", testAllgatherv},
		{"alltoall", testAlltoall},
		{"alltoallv", testAlltoallv},
		{"allreduce", testAllreduce},
		{"ring", testRing},
		{"split node", testSplitNodeSize(nodeSize)},
	}
	times := make([]time.Duration, len(steps))
	runRanks(t, n, nodeSize, func(c Comm) error {
		for i, s := range steps {
			t0 := time.Now()
			if err := s.run(c); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			// Barrier so that rank 0's clock covers the whole step.
			if err := c.Barrier(); err != nil {
				return err
			}
			if c.Rank() == 0 {
				times[i] = time.Since(t0)
			}
		}
		return nil
	})
	for i, s := range steps {
		t.Logf("%-10s %v", s.name, times[i])
	}
	t.Logf("1024 ranks, all steps: %v", time.Since(start))
}

func testBcastFrom(root int) func(Comm) error {
	return func(c Comm) error {
		buf := make([]byte, 64)
		if c.Rank() == root {
			for i := range buf {
				buf[i] = byte(i)
			}
		}
		if err := c.Bcast(buf, root); err != nil {
			return err
		}
		for i, b := range buf {
			if b != byte(i) {
				return fmt.Errorf("bcast byte %d is %d", i, b)
			}
		}
		return nil
	}
}

func testRing(c Comm) error {
	n, me := c.Size(), c.Rank()
	in := make([]byte, 2)
	r, err := c.Irecv(in, (me+n-1)%n, 1)
	if err != nil {
		return err
	}
	s, err := c.Isend([]byte{byte(me), byte(me >> 8)}, (me+1)%n, 1)
	if err != nil {
		return err
	}
	if err := Waitall(r, s); err != nil {
		return err
	}
	if got := int(in[0]) | int(in[1])<<8; got != (me+n-1)%n {
		return fmt.Errorf("ring brought %d", got)
	}
	return nil
}

func testSplitNodeSize(nodeSize int) func(Comm) error {
	return func(c Comm) error {
		node, err := c.SplitNode()
		if err != nil {
			return err
		}
		if node.Size() != nodeSize || node.Rank() != c.Rank()%nodeSize {
			return fmt.Errorf("node comm: rank %d of %d", node.Rank(), node.Size())
		}
		return node.Free()
	}
}
