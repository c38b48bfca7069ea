package cache

import (
	"io"

	"github.com/collio/collio/driver"
)

// WriteRuns writes the runs as one batch (driver.RunWriter): one
// driver.WriteRuns call on the cache file and one journal write for all
// of them, or one driver.WriteRuns call on the global file once this rank
// writes through. When the cache cannot take the batch this rank falls
// back, as for a single write, and the whole batch goes to the global
// file.
func (c *File) WriteRuns(runs []driver.Run) (int64, error) {
	if c.passthrough.Load() {
		return driver.WriteRuns(c.global, runs)
	}
	spans := make([]span, 0, len(runs))
	for _, r := range runs {
		if r.Off < 0 {
			return driver.WriteEach(c, runs) // let the driver reject it, in order
		}
		if n := r.Len(); n > 0 {
			spans = append(spans, span{r.Off, r.Off + n})
		}
	}
	if len(spans) == 0 {
		return 0, nil
	}
	toGlobal := func(f driver.File) (int, error) {
		n, err := driver.WriteRuns(f, runs)
		return int(n), err
	}
	locked := 0
	undo := func() {
		if c.opts.Coherent {
			for _, s := range spans[:locked] {
				c.locks.Unlock(s.start, s.end-s.start, true)
			}
		}
	}
	if c.opts.Coherent {
		for _, s := range spans {
			if err := c.locks.Lock(s.start, s.end-s.start, true); err != nil {
				undo()
				return 0, err
			}
			locked++
		}
	}
	for _, s := range spans {
		if err := c.cache.Allocate(s.start, s.end-s.start); err != nil {
			undo()
			return c.fallBackRuns("reserving space in the cache file", err, toGlobal)
		}
	}
	var total int64
	for _, s := range spans {
		total += s.end - s.start
	}
	k, err := driver.WriteRuns(c.cache, runs)
	if err == nil && k != total {
		err = io.ErrShortWrite
	}
	if err != nil {
		undo()
		return c.fallBackRuns("writing the cache file", err, toGlobal)
	}
	// Journal and queue under one lock, as write does.
	c.mu.Lock()
	first, err := c.journal.appendSpans(spans)
	if err == nil {
		for i, s := range spans {
			c.enqueueLocked(s, first+uint64(i), c.opts.Coherent)
		}
	}
	c.mu.Unlock()
	if err != nil {
		undo()
		return c.fallBackRuns("writing the cache journal", err, toGlobal)
	}
	c.record(Stats{CachedBytes: total})
	return total, nil
}

// fallBackRuns is fallBack for a batch.
func (c *File) fallBackRuns(what string, cause error, do func(driver.File) (int, error)) (int64, error) {
	n, err := c.fallBack(what, cause, do)
	return int64(n), err
}

// ReadRuns fills the runs (driver.RunReader): runs that no uncopied
// extent reaches go to the global file in batches of one driver.ReadRuns
// call; the others are read as ReadV reads them, parts from the cache.
// Bytes past end of file read as zeros.
func (c *File) ReadRuns(runs []driver.Run) (int64, error) {
	var total int64
	start := 0 // first run of the batch for the global file
	flush := func(end int) error {
		if start == end {
			return nil
		}
		n, err := driver.ReadRuns(c.global, runs[start:end])
		total += n
		start = end
		return err
	}
	for i, r := range runs {
		n := r.Len()
		c.mu.Lock()
		parts, pendEnd := c.cachedLocked(span{r.Off, r.Off + n})
		c.mu.Unlock()
		if r.Off >= 0 && len(parts) == 0 && pendEnd <= r.Off {
			continue // joins the batch
		}
		if err := flush(i); err != nil {
			return total, err
		}
		start = i + 1
		k, err := driver.ReadEach(c, runs[i:i+1])
		total += k
		if err != nil {
			return total, err
		}
	}
	return total, flush(len(runs))
}
