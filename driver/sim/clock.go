package sim

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is the time source of the cost model. Times are nanoseconds on a
// clock that every process on the machine shares.
type Clock interface {
	Now() int64
	// SleepUntil returns at time t or later.
	SleepUntil(t int64)
}

// realClock is CLOCK_MONOTONIC, which all processes of a machine share
// (unlike the monotonic reading inside time.Time, whose origin is
// per-process).
type realClock struct{}

func (realClock) Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("sim: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

func (c realClock) SleepUntil(t int64) {
	for {
		d := t - c.Now()
		if d <= 0 {
			return
		}
		time.Sleep(time.Duration(d))
	}
}

// FakeClock is a Clock for tests: time moves only when someone sleeps
// (to the wake-up time) or calls Advance. It is safe for concurrent use,
// but with several goroutines the order of their sleeps decides the
// times they see.
type FakeClock struct {
	mu  sync.Mutex
	now int64
}

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start int64) *FakeClock { return &FakeClock{now: start} }

func (c *FakeClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// SleepUntil moves the clock to t if t is later, and returns at once.
func (c *FakeClock) SleepUntil(t int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = max(c.now, t)
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += int64(d)
}
