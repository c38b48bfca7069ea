package cache

import (
	"sync"
	"time"

	"github.com/collio/collio/driver"
)

// Stats are a cache's counters. The not-hidden part of the copy (the
// paper's not_hidden_sync) is SyncWait + CloseWait + FinalWait + DrainWait: the
// time Sync, Close, the waits for deferred closes and collective calls
// over cached ranges blocked for copies that had not finished in the
// background.
type Stats struct {
	CachedBytes int64         // bytes written to the cache file
	CopiedBytes int64         // bytes copied to the global file
	Copies      int64         // extents copied (after merging adjacent writes)
	CopyErrors  int64         // failed extent copies
	CopyTime    time.Duration // workers' busy time copying (hidden or not)
	SyncWait    time.Duration // Sync waiting for copies
	Syncs       int64
	CloseWait   time.Duration // Close waiting for copies (in the background for a deferred close)
	FinalWait   time.Duration // WaitPath/WaitAll waiting for deferred closes (process totals only)
	// DrainWait is the time collective calls waited for copies of ranges
	// they were about to read or write (DrainRange), in Drains calls.
	DrainWait time.Duration
	Drains    int64
	// Fallback: a write could not use the cache (reservation or cache
	// write failed) and this rank wrote the global file directly since.
	Fallback bool
}

// NotHidden is the copy time the application waited for.
func (s Stats) NotHidden() time.Duration {
	return s.SyncWait + s.CloseWait + s.FinalWait + s.DrainWait
}

func (s *Stats) add(o Stats) {
	s.CachedBytes += o.CachedBytes
	s.CopiedBytes += o.CopiedBytes
	s.Copies += o.Copies
	s.CopyErrors += o.CopyErrors
	s.CopyTime += o.CopyTime
	s.SyncWait += o.SyncWait
	s.Syncs += o.Syncs
	s.CloseWait += o.CloseWait
	s.FinalWait += o.FinalWait
	s.DrainWait += o.DrainWait
	s.Drains += o.Drains
	s.Fallback = s.Fallback || o.Fallback
}

type statBox struct {
	mu sync.Mutex
	s  Stats
}

func (b *statBox) add(o Stats) {
	b.mu.Lock()
	b.s.add(o)
	b.mu.Unlock()
}

func (b *statBox) get() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.s
}

// totals accumulate over every cache of the process.
var totals statBox

// Totals returns the counters summed over every cache the process opened,
// including the waits for deferred closes.
func Totals() Stats { return totals.get() }

// StatsOf returns the counters of the cache File in f's decorator chain
// (driver.As); false if there is none.
func StatsOf(f driver.File) (Stats, bool) {
	if c, ok := driver.As[*File](f); ok {
		return c.stats.get(), true
	}
	return Stats{}, false
}
