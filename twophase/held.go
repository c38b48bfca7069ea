package twophase

import (
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
)

// heldBufs is how many buffers own mode gathers before it moves them (a
// variable for tests: own mode reports at most ownRunBudget runs, so a
// call rarely reaches it).
var heldBufs = 4096

// hold keeps an own-mode round's runs to move with the next rounds' in one
// batch: their data stays in the caller's buffer until the call returns,
// and each batch costs one hand-off of the processor where the driver
// batches (driver.RunWriter, driver.RunReader). With 4 processes on 2
// cores, each writing 256 runs of 512 KiB to ext4, a C loop over all of
// them moved 5-11% more than Go's pwritev per run, C loops of 32 runs
// 2-5% more (scripts/syscallcost.sh).
func (e *engine) hold(runs []driver.Run, write bool) error {
	if !e.held.Add(runs...) {
		return nil
	}
	return e.flushHeld(write).Err
}

// flushHeld writes (or reads) the held runs.
func (e *engine) flushHeld(write bool) (r coll.IOResult) {
	if e.held.Empty() {
		return r
	}
	start := time.Now()
	want := e.held.Bytes()
	n, err := e.held.Move(e.j.File, write)
	if err == nil && !write && e.j.EOF.Taken() {
		err = e.j.EOF.FoundShort(e.j.File, n, want)
	}
	r.IO, r.Err = time.Since(start), err
	return r
}
