package mpi

import (
	"runtime"
	"sync/atomic"
	"time"
)

// The Go runtime's monitor thread counts a processor whose goroutine has
// not passed through the scheduler for 10 ms as running too long. From
// then on, at each of its ticks (every 20 µs while it finds such work) it
// takes that processor whenever the goroutine's thread is in C and wakes
// another thread to look for work, which finds none and sleeps again. A
// rank that loops over MPI calls from one goroutine never passes through
// the scheduler on its own (a call into C and back does not), so after its
// first 10 ms every MPI call that waits costs several thread wakeups; on
// cores shared with other ranks each waits its turn, and small collectives
// took two to four times as long as from C. A yield every few
// milliseconds, before a call into MPI that may wait, keeps the processor
// fresh at the cost of one pass through the scheduler.
//
// The monitor also takes, after one tick, the processor of a thread in C
// when no other processor is idle (collio.ShareCores leaves one spare
// where ranks have a CPU each): with one processor a yield buys nothing,
// and is not made.
const yieldEvery = 5 * time.Millisecond

var (
	epoch     = time.Now()
	lastYield atomic.Int64 // time.Since(epoch) at the last yield
)

// beforeWait is called before each call into MPI that may wait for other
// ranks: it yields to the scheduler if yieldEvery has passed since the
// last yield.
func beforeWait() {
	now := int64(time.Since(epoch))
	last := lastYield.Load()
	if now-last < int64(yieldEvery) || !lastYield.CompareAndSwap(last, now) {
		return
	}
	if runtime.GOMAXPROCS(0) > 1 {
		runtime.Gosched()
	}
}
