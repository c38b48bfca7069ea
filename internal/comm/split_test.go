package comm

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/collio/collio/internal/ioerr"
)

// worldRanks gathers the world rank of every member of c, in c's order.
func worldRanks(c Comm, me int) ([]int, error) {
	recv := make([]byte, 2*c.Size())
	if err := c.Allgather([]byte{byte(me), byte(me >> 8)}, recv); err != nil {
		return nil, err
	}
	out := make([]int, c.Size())
	for i := range out {
		out[i] = int(recv[2*i]) | int(recv[2*i+1])<<8
	}
	return out, nil
}

// TestSplitOrdersByKeyThenRank: color rank%3, key -rank/2 so that pairs
// of ranks tie on key and fall back to old rank order; color -1 for the
// last rank gives nil.
func TestSplitOrdersByKeyThenRank(t *testing.T) {
	const n = 10
	runRanks(t, n, 0, func(c Comm) error {
		me := c.Rank()
		color := me % 3
		if me == n-1 {
			color = -1
		}
		sub, err := c.Split(color, -(me / 2))
		if err != nil {
			return err
		}
		if color < 0 {
			if sub != nil {
				return errors.New("negative color gave a communicator")
			}
			return nil
		}
		var want []int
		for r := range n - 1 {
			if r%3 == color {
				want = append(want, r)
			}
		}
		slices.SortStableFunc(want, func(a, b int) int { return -(a / 2) + (b / 2) })
		got, err := worldRanks(sub, me)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) || got[sub.Rank()] != me {
			return fmt.Errorf("color %d: members %v (I am %d), want %v", color, got, sub.Rank(), want)
		}
		return sub.Free()
	})
}

// TestSplitNodeKeepsNodesAcrossNestedSplits: 7 ranks in nodes of 3
// ({0,1,2} {3,4,5} {6}); splitting by parity first and then by node must
// still group by the world's virtual nodes.
func TestSplitNodeKeepsNodesAcrossNestedSplits(t *testing.T) {
	runRanks(t, 7, 3, func(c Comm) error {
		me := c.Rank()
		node, err := c.SplitNode()
		if err != nil {
			return err
		}
		got, err := worldRanks(node, me)
		if err != nil {
			return err
		}
		want := map[int][]int{0: {0, 1, 2}, 1: {3, 4, 5}, 2: {6}}[me/3]
		if !slices.Equal(got, want) {
			return fmt.Errorf("node comm of %d: %v, want %v", me, got, want)
		}
		if id, ok := NodeOf(node); !ok || id != me/3 {
			return fmt.Errorf("NodeOf = %d, %v; want %d", id, ok, me/3)
		}
		parity, err := c.Split(me%2, 0)
		if err != nil {
			return err
		}
		nested, err := parity.SplitNode()
		if err != nil {
			return err
		}
		got, err = worldRanks(nested, me)
		if err != nil {
			return err
		}
		want = nil
		for r := range 7 {
			if r%2 == me%2 && r/3 == me/3 {
				want = append(want, r)
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("nested node comm of %d: %v, want %v", me, got, want)
		}
		return errors.Join(nested.Free(), parity.Free(), node.Free())
	})
}

// TestDupIsolatesMessagesAndCollectives: the same (source, tag) on a dup
// and on the original never cross, and a nonblocking collective open on
// the dup is not confused with blocking ones on the original.
func TestDupIsolatesMessagesAndCollectives(t *testing.T) {
	runRanks(t, 3, 0, func(c Comm) error {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		me, n := c.Rank(), c.Size()
		if d.Rank() != me || d.Size() != n {
			return fmt.Errorf("dup is rank %d of %d", d.Rank(), d.Size())
		}
		next := (me + 1) % n
		prev := (me + n - 1) % n
		// Send on the dup first, receive on the original first.
		s1, err := d.Isend([]byte{'d'}, next, 5)
		if err != nil {
			return err
		}
		s2, err := c.Isend([]byte{'o'}, next, 5)
		if err != nil {
			return err
		}
		fromOrig, fromDup := make([]byte, 1), make([]byte, 1)
		r1, err := c.Irecv(fromOrig, prev, 5)
		if err != nil {
			return err
		}
		r2, err := d.Irecv(fromDup, prev, 5)
		if err != nil {
			return err
		}
		if err := Waitall(s1, s2, r1, r2); err != nil {
			return err
		}
		if fromOrig[0] != 'o' || fromDup[0] != 'd' {
			return fmt.Errorf("original got %q, dup got %q", fromOrig, fromDup)
		}

		dupRecv := make([]byte, n)
		req, err := d.Iallgather([]byte{byte(me + 50)}, dupRecv)
		if err != nil {
			return err
		}
		origRecv := make([]byte, n)
		if err := c.Allgather([]byte{byte(me)}, origRecv); err != nil {
			return err
		}
		if err := req.Wait(); err != nil {
			return err
		}
		if err := sameBytes("original allgather", origRecv, []byte{0, 1, 2}); err != nil {
			return err
		}
		if err := sameBytes("dup iallgather", dupRecv, []byte{50, 51, 52}); err != nil {
			return err
		}
		return d.Free()
	})
}

func TestFree(t *testing.T) {
	runRanks(t, 2, 0, func(c Comm) error {
		if err := c.Free(); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("freeing the world: %v", err)
		}
		d, err := c.Dup()
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		if err := d.Free(); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("second free: %v", err)
		}
		if err := d.Barrier(); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("barrier on a freed comm: %v", err)
		}
		if _, err := d.Isend(nil, 0, 0); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("isend on a freed comm: %v", err)
		}
		return c.Barrier() // the world is unaffected
	})
}

func TestWorldCommHandles(t *testing.T) {
	w := NewWorld(4, 3)
	if w.Comm(2) != w.Comm(2) {
		t.Fatal("Comm(rank) returns different handles")
	}
	if id, ok := NodeOf(w.Comm(3)); !ok || id != 1 {
		t.Fatalf("NodeOf(rank 3) = %d, %v; want 1", id, ok)
	}
	bad := w.Comm(4)
	if err := bad.Barrier(); !errors.Is(err, ioerr.ErrArg) {
		t.Fatalf("out-of-range rank: %v", err)
	}
	if _, ok := NodeOf(bad); ok {
		t.Fatal("NodeOf of a bad comm reports ok")
	}
}
