package comm

import (
	"fmt"
	"maps"
	"testing"
)

// TestCountingKnownPattern: 4 ranks where everyone sends to rank 0 (the
// "aggregator") in an exchange phase, then a metadata phase of small
// collectives, then a split communicator. Every number is worked out by
// hand from the counting rules in counting.go.
func TestCountingKnownPattern(t *testing.T) {
	const n = 4
	k := NewCounters()
	runRanks(t, n, 2, func(world Comm) error {
		c := Counting(world, k)
		me := c.Rank()
		if !SetPhase(c, "exchange") {
			return fmt.Errorf("counting comm is not a Phaser")
		}
		// Alltoallv: 10 bytes from every rank to rank 0, self included
		// (self is not counted).
		scounts, sdispls := []int{10, 0, 0, 0}, []int{0, 10, 10, 10}
		rcounts, rdispls := make([]int, n), make([]int, n)
		if me == 0 {
			rcounts, rdispls = []int{10, 10, 10, 10}, []int{0, 10, 20, 30}
		}
		if err := c.Alltoallv(make([]byte, 10), scounts, sdispls, make([]byte, 40), rcounts, rdispls); err != nil {
			return err
		}
		// Point to point: 5 bytes from ranks 1-3 to rank 0.
		if me == 0 {
			for range n - 1 {
				r, err := c.Irecv(make([]byte, 8), AnySource, 1)
				if err != nil {
					return err
				}
				for done := false; !done; { // completion seen through Test
					if done, err = r.Test(); err != nil {
						return err
					}
				}
				if err := r.Wait(); err != nil { // a second look must not count again
					return err
				}
			}
		} else if err := recvWait(c.Isend(make([]byte, 5), 0, 1)); err != nil {
			return err
		}

		SetPhase(c, "meta")
		if err := c.Bcast(make([]byte, 8), 0); err != nil {
			return err
		}
		if err := c.Allgather(make([]byte, 2), make([]byte, 2*n)); err != nil {
			return err
		}
		if err := c.AllreduceInt64(make([]int64, 3), make([]int64, 3), OpMax); err != nil {
			return err
		}
		if err := c.Alltoall(make([]byte, 4*n), make([]byte, 4*n), 4); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}

		// A split communicator counts under the world rank, in the phase
		// set on its parent: odd ranks send 3 bytes to their sub rank 0.
		sub, err := c.Split(me%2, 0)
		if err != nil {
			return err
		}
		SetPhase(sub, "split")
		if sub.Rank() == 1 {
			err = recvWait(sub.Issend(make([]byte, 3), 0, 0))
		} else {
			err = recvWait(sub.Irecv(make([]byte, 3), 1, 0))
		}
		if err != nil {
			return err
		}
		if node, ok := NodeOf(sub); !ok || node != me/2 {
			return fmt.Errorf("NodeOf through the wrapper: %d, %v", node, ok)
		}
		return sub.Free()
	})

	meta := func(root bool) PhaseCount {
		p := PhaseCount{Collectives: 6, Alltoalls: 1, // five calls and the Split
			MsgsSent: 3, MsgsRecv: 3, BytesSent: 2 + 24 + 12, BytesRecv: 6 + 24 + 12,
			CollBytesSent: 2 + 24, CollBytesRecv: 6 + 24} // the Alltoall's 12 are messages
		if root {
			p.BytesSent += 8
			p.CollBytesSent += 8
		} else {
			p.BytesRecv += 8
			p.CollBytesRecv += 8
		}
		return p
	}
	wantRank := map[int]map[string]PhaseCount{
		0: {
			"exchange": {Collectives: 1, Alltoalls: 1, MsgsRecv: 6, BytesRecv: 30 + 15},
			"meta":     meta(true),
			"split":    {MsgsRecv: 1, BytesRecv: 3},
		},
		1: {
			"exchange": {Collectives: 1, Alltoalls: 1, MsgsSent: 2, BytesSent: 15},
			"meta":     meta(false),
			"split":    {MsgsRecv: 1, BytesRecv: 3},
		},
	}
	wantRank[2] = maps.Clone(wantRank[1])
	wantRank[2]["split"] = PhaseCount{MsgsSent: 1, BytesSent: 3}
	wantRank[3] = wantRank[2]
	for r := range n {
		if got := k.SnapshotRank(r); !maps.Equal(got, wantRank[r]) {
			t.Errorf("rank %d:\n got %+v\nwant %+v", r, got, wantRank[r])
		}
	}
	total := k.Snapshot()["exchange"]
	if want := (PhaseCount{Collectives: 4, Alltoalls: 4, MsgsSent: 6, MsgsRecv: 6, BytesSent: 45, BytesRecv: 45}); total != want {
		t.Errorf("exchange total %+v, want %+v", total, want)
	}
	if got := k.Ranks(); fmt.Sprint(got) != "[0 1 2 3]" {
		t.Errorf("Ranks() = %v", got)
	}
	k.Reset()
	if got := k.Snapshot(); len(got) != 0 {
		t.Errorf("after Reset: %v", got)
	}
}

// TestCountingGlobalPhase: wrappers without a phase of their own follow
// the Counters' phase; "" means "other".
func TestCountingGlobalPhase(t *testing.T) {
	k := NewCounters()
	w := NewWorld(1, 0)
	c := Counting(w.Comm(0), k)
	step := func(phase string) {
		k.SetPhase(phase)
		if err := recvWait(c.Isend([]byte{1, 2}, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if err := recvWait(c.Irecv(make([]byte, 2), 0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	step("")
	step("read")
	step("read")
	one := PhaseCount{MsgsSent: 1, MsgsRecv: 1, BytesSent: 2, BytesRecv: 2}
	two := PhaseCount{MsgsSent: 2, MsgsRecv: 2, BytesSent: 4, BytesRecv: 4}
	want := map[string]PhaseCount{OtherPhase: one, "read": two}
	if got := k.Snapshot(); !maps.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if SetPhase(w.Comm(0), "x") {
		t.Error("SetPhase found a Phaser in a plain comm")
	}
	if Counting(nil, k) != nil {
		t.Error("Counting(nil) is not nil")
	}
}

// TestCountingSkipsFailedCalls: an erroring call is not counted.
func TestCountingSkipsFailedCalls(t *testing.T) {
	k := NewCounters()
	c := Counting(NewWorld(2, 0).Comm(0), k)
	if _, err := c.Isend([]byte{1}, 5, 0); err == nil {
		t.Fatal("send to rank 5 succeeded")
	}
	if got := k.Snapshot(); len(got) != 0 {
		t.Errorf("failed send counted: %v", got)
	}
}

// TestCountingInterNode: the Counters' node layout (ranks 0 and 2 on one
// node, 1 and 3 on the other: bynode) differs from the world's virtual
// nodes (0-1, 2-3); messages to and from the other node are counted as
// such, also on split communicators. Worked out by hand.
func TestCountingInterNode(t *testing.T) {
	const n = 4
	k := NewCounters()
	k.SetNodes([]int{0, 1, 0, 1})
	runRanks(t, n, 2, func(world Comm) error {
		c := Counting(world, k)
		me := c.Rank()
		SetPhase(c, "a2av")
		// 10 bytes from every rank to rank 0; only 1 and 3 cross.
		rcounts, rdispls := make([]int, n), make([]int, n)
		if me == 0 {
			rcounts, rdispls = []int{10, 10, 10, 10}, []int{0, 10, 20, 30}
		}
		if err := c.Alltoallv(make([]byte, 10), []int{10, 0, 0, 0}, []int{0, 10, 10, 10}, make([]byte, 40), rcounts, rdispls); err != nil {
			return err
		}
		SetPhase(c, "p2p") // 5 bytes from each other rank to rank 0
		if me == 0 {
			for src := 1; src < n; src++ {
				if err := recvWait(c.Irecv(make([]byte, 5), src, 1)); err != nil {
					return err
				}
			}
		} else if err := recvWait(c.Isend(make([]byte, 5), 0, 1)); err != nil {
			return err
		}
		SetPhase(c, "a2a") // 4 bytes to each of 3 peers, 2 of them across
		if err := c.Alltoall(make([]byte, 4*n), make([]byte, 4*n), 4); err != nil {
			return err
		}
		// A world virtual node: {0,1} and {2,3}, which cross in this layout.
		sub, err := c.Split(me/2, 0)
		if err != nil {
			return err
		}
		SetPhase(sub, "split")
		if sub.Rank() == 1 {
			err = recvWait(sub.Issend(make([]byte, 3), 0, 0))
		} else {
			err = recvWait(sub.Irecv(make([]byte, 3), 1, 0))
		}
		if err != nil {
			return err
		}
		return sub.Free()
	})
	// The Split is counted in the phase current when it is called.
	a2a := PhaseCount{Collectives: 2, Alltoalls: 1, MsgsSent: 3, MsgsRecv: 3, BytesSent: 12, BytesRecv: 12,
		MsgsSentInter: 2, MsgsRecvInter: 2, BytesSentInter: 8, BytesRecvInter: 8}
	want := map[int]map[string]PhaseCount{
		0: {
			"a2av":  {Collectives: 1, Alltoalls: 1, MsgsRecv: 3, BytesRecv: 30, MsgsRecvInter: 2, BytesRecvInter: 20},
			"p2p":   {MsgsRecv: 3, BytesRecv: 15, MsgsRecvInter: 2, BytesRecvInter: 10},
			"a2a":   a2a,
			"split": {MsgsRecv: 1, BytesRecv: 3, MsgsRecvInter: 1, BytesRecvInter: 3},
		},
		1: {
			"a2av":  {Collectives: 1, Alltoalls: 1, MsgsSent: 1, BytesSent: 10, MsgsSentInter: 1, BytesSentInter: 10},
			"p2p":   {MsgsSent: 1, BytesSent: 5, MsgsSentInter: 1, BytesSentInter: 5},
			"a2a":   a2a,
			"split": {MsgsSent: 1, BytesSent: 3, MsgsSentInter: 1, BytesSentInter: 3},
		},
		2: {
			"a2av":  {Collectives: 1, Alltoalls: 1, MsgsSent: 1, BytesSent: 10},
			"p2p":   {MsgsSent: 1, BytesSent: 5},
			"a2a":   a2a,
			"split": {MsgsRecv: 1, BytesRecv: 3, MsgsRecvInter: 1, BytesRecvInter: 3},
		},
	}
	want[3] = maps.Clone(want[1])
	want[3]["split"] = want[1]["split"]
	for r := range n {
		if got := k.SnapshotRank(r); !maps.Equal(got, want[r]) {
			t.Errorf("rank %d:\n got %+v\nwant %+v", r, got, want[r])
		}
	}
}
