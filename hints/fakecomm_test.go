package hints

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/collio/collio/internal/comm"
)

// fakeWorld is a test-only in-memory communicator: ranks are goroutines and
// every collective is one exchange of contributions. It also checks that all
// ranks make the same sequence of collective calls, which is what keeps
// CheckSame from hanging.
type fakeWorld struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	gen     int
	arrived int
	ops     []string
	slots   [][]byte
	result  [][]byte
	calls   [][]string // per rank, the collectives it made
	mixedOp error
}

func runFake(n int, fn func(c comm.Comm) error) ([]error, [][]string, error) {
	w := &fakeWorld{n: n, ops: make([]string, n), slots: make([][]byte, n), calls: make([][]string, n)}
	w.cond = sync.NewCond(&w.mu)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = fn(&fakeComm{w: w, rank: r})
		}()
	}
	wg.Wait()
	return errs, w.calls, w.mixedOp
}

// exchange deposits data under op and returns every rank's contribution
// once all ranks have arrived.
func (w *fakeWorld) exchange(rank int, op string, data []byte) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gen
	w.calls[rank] = append(w.calls[rank], op)
	w.ops[rank] = op
	w.slots[rank] = append([]byte(nil), data...)
	w.arrived++
	if w.arrived == w.n {
		for r, o := range w.ops {
			if o != w.ops[0] && w.mixedOp == nil {
				w.mixedOp = fmt.Errorf("collective %d: rank 0 called %s, rank %d called %s", g, w.ops[0], r, o)
			}
		}
		w.result, w.slots = w.slots, make([][]byte, w.n)
		w.arrived = 0
		w.gen++
		w.cond.Broadcast()
	} else {
		for w.gen == g {
			w.cond.Wait()
		}
	}
	return w.result
}

type fakeComm struct {
	w    *fakeWorld
	rank int
}

var errFake = errors.New("fake comm: not implemented")

func (c *fakeComm) Rank() int { return c.rank }
func (c *fakeComm) Size() int { return c.w.n }

func (c *fakeComm) Barrier() error {
	c.w.exchange(c.rank, "Barrier", nil)
	return nil
}

func (c *fakeComm) Bcast(buf []byte, root int) error {
	all := c.w.exchange(c.rank, "Bcast", buf)
	if len(all[root]) != len(buf) {
		return fmt.Errorf("fake Bcast: rank %d has %d bytes, root %d bytes", c.rank, len(buf), len(all[root]))
	}
	copy(buf, all[root])
	return nil
}

func (c *fakeComm) Allgather(send, recv []byte) error {
	all := c.w.exchange(c.rank, "Allgather", send)
	if len(recv) != len(send)*c.w.n {
		return fmt.Errorf("fake Allgather: recv is %d bytes, want %d", len(recv), len(send)*c.w.n)
	}
	for r, b := range all {
		if len(b) != len(send) {
			return fmt.Errorf("fake Allgather: rank %d sent %d bytes, rank %d %d", r, len(b), c.rank, len(send))
		}
		copy(recv[r*len(send):], b)
	}
	return nil
}

func (c *fakeComm) Allgatherv(send, recv []byte, counts, displs []int) error {
	all := c.w.exchange(c.rank, "Allgatherv", send)
	for r, b := range all {
		if len(b) != counts[r] {
			return fmt.Errorf("fake Allgatherv: rank %d sent %d bytes, counts says %d", r, len(b), counts[r])
		}
		copy(recv[displs[r]:], b)
	}
	return nil
}

func (c *fakeComm) AllreduceInt64(in, out []int64, op comm.Op) error {
	buf := make([]byte, 8*len(in))
	for i, v := range in {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
	}
	all := c.w.exchange(c.rank, "AllreduceInt64", buf)
	for i := range out {
		acc := int64(binary.LittleEndian.Uint64(all[0][8*i:]))
		for _, b := range all[1:] {
			v := int64(binary.LittleEndian.Uint64(b[8*i:]))
			switch op {
			case comm.OpSum:
				acc += v
			case comm.OpMax:
				acc = max(acc, v)
			case comm.OpMin:
				acc = min(acc, v)
			}
		}
		out[i] = acc
	}
	return nil
}

func (c *fakeComm) Alltoall(send, recv []byte, n int) error { return errFake }
func (c *fakeComm) Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	return errFake
}
func (c *fakeComm) Isend(buf []byte, dest, tag int) (comm.Request, error)  { return nil, errFake }
func (c *fakeComm) Issend(buf []byte, dest, tag int) (comm.Request, error) { return nil, errFake }
func (c *fakeComm) Irecv(buf []byte, src, tag int) (comm.Request, error)   { return nil, errFake }
func (c *fakeComm) Iallgather(send, recv []byte) (comm.Request, error)     { return nil, errFake }
func (c *fakeComm) Split(color, key int) (comm.Comm, error)                { return nil, errFake }
func (c *fakeComm) SplitNode() (comm.Comm, error)                          { return nil, errFake }
func (c *fakeComm) Dup() (comm.Comm, error)                                { return nil, errFake }
func (c *fakeComm) Free() error                                            { return nil }
