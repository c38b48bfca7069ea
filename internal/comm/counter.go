package comm

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Counter is one int64 that every rank of a communicator reads and
// changes atomically on its own, without the other ranks taking part: the
// shared file pointer. Over MPI it lives in a window on rank 0 and is
// changed with MPI_Fetch_and_op; in memory, under a mutex.
type Counter interface {
	// Add adds delta and returns the value before (delta 0 reads it).
	Add(delta int64) (old int64, err error)
	// Set stores v.
	Set(v int64) error
	// Free releases the counter. It is collective over the ranks that
	// made it.
	Free() error
}

// ConcurrentCounter is a Counter whose Add and Set any goroutine may call
// at any time, with no MPI call behind them (in memory, or served over
// TCP): a background goroutine can report through it.
type ConcurrentCounter interface {
	Counter
	Concurrent()
}

// CounterSiblings is a Counter that gives handles on other values served
// beside its own (at most 3, i from 1): no collective call and nothing new
// to set up. A sibling starts at 0, every rank's Sibling(i) meets the same
// value, and it lives as long as the counter; its Free is local.
type CounterSiblings interface {
	Sibling(i int) Counter
}

// CounterMaker is implemented by communicators that can make a Counter.
// Find it through wrappers with As.
type CounterMaker interface {
	// NewCounter makes a counter holding init (collective: every rank
	// passes the same init and gets its handle on the same counter).
	NewCounter(init int64) (Counter, error)
}

// counters holds an in-memory group's counters by creation number: every
// rank makes its counters in the same order (NewCounter is collective),
// so the k-th NewCounter of every rank meets the same one.
type counters struct {
	mu sync.Mutex
	m  map[uint64]*counterValue
}

// counterValue is the value every rank's handle shares.
type counterValue struct {
	mu sync.Mutex
	v  int64
}

// memCounter is one rank's handle on an in-memory counter.
type memCounter struct {
	c      *memComm // the rank's communicator, for Free's barrier
	k      uint64
	shared *counterValue
	freed  atomic.Bool
	owner  *memCounter // the counter a sibling was made from
}

// siblingKey is where sibling i of counter k lives in the group's map.
func siblingKey(k uint64, i int) uint64 { return k | uint64(i)<<56 }

// Sibling returns a handle on value i (1 to 3) beside the counter's.
func (m *memCounter) Sibling(i int) Counter {
	if i < 1 || i > 3 || m.owner != nil {
		panic(fmt.Sprintf("comm: Sibling(%d) of an in-memory counter", i))
	}
	g := m.c.g
	key := siblingKey(m.k, i)
	g.counters.mu.Lock()
	v, ok := g.counters.m[key]
	if !ok {
		v = &counterValue{}
		g.counters.m[key] = v
	}
	g.counters.mu.Unlock()
	return &memCounter{c: m.c, k: key, shared: v, owner: m}
}

// NewCounter makes an in-memory counter shared by the group's ranks.
func (c *memComm) NewCounter(init int64) (Counter, error) {
	if err := c.usable("NewCounter"); err != nil {
		return nil, err
	}
	k := c.nextCounter
	c.nextCounter++
	g := c.g
	g.counters.mu.Lock()
	if g.counters.m == nil {
		g.counters.m = make(map[uint64]*counterValue)
	}
	v, ok := g.counters.m[k]
	if !ok {
		v = &counterValue{v: init}
		g.counters.m[k] = v
	}
	g.counters.mu.Unlock()
	// The barrier makes the call collective, as MPI_Win_allocate is.
	if err := c.Barrier(); err != nil {
		return nil, err
	}
	return &memCounter{c: c, k: k, shared: v}, nil
}

func (m *memCounter) Add(delta int64) (int64, error) {
	if err := m.live("Counter.Add"); err != nil {
		return 0, err
	}
	m.shared.mu.Lock()
	defer m.shared.mu.Unlock()
	old := m.shared.v
	m.shared.v += delta
	return old, nil
}

// Concurrent marks memCounter a ConcurrentCounter: a mutex guards it.
func (m *memCounter) Concurrent() {}

func (m *memCounter) Set(v int64) error {
	if err := m.live("Counter.Set"); err != nil {
		return err
	}
	m.shared.mu.Lock()
	m.shared.v = v
	m.shared.mu.Unlock()
	return nil
}

func (m *memCounter) Free() error {
	if err := m.live("Counter.Free"); err != nil {
		return err
	}
	m.freed.Store(true)
	if m.owner != nil {
		return nil // a sibling: its value goes with the counter's
	}
	err := m.c.Barrier()
	g := m.c.g
	g.counters.mu.Lock()
	for i := range 4 {
		delete(g.counters.m, siblingKey(m.k, i))
	}
	g.counters.mu.Unlock()
	return err
}

func (m *memCounter) live(op string) error {
	if m.freed.Load() || (m.owner != nil && m.owner.freed.Load()) {
		return argError(op, m.c.rank, "the counter has been freed")
	}
	return m.c.g.world.aborted()
}

var _ CounterMaker = (*memComm)(nil)
