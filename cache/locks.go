package cache

import (
	"math"
	"sync"

	"github.com/collio/collio/driver"
)

// lockTable counts the holders of byte ranges of one open global file and
// turns the first hold of a range into a driver Lock and the last release
// into a driver Unlock.
//
// It exists because driver locks belong to the open file (ufs uses OFD
// locks): locking a range twice through the same file is one lock, and one
// Unlock drops it. The cache holds a lock per unsynced extent (coherent
// mode) and adio takes its own locks (atomic mode, data sieving) through
// the same file, on ranges that may overlap; without counting, the first
// Unlock would release ranges others still rely on.
//
// A shared range that gets an exclusive holder is upgraded; it is not
// downgraded when that holder leaves (the lock stays exclusive until the
// range is free), which is stronger than needed but never wrong.
type lockTable struct {
	inner driver.File
	// acquire serialises Lock calls, so that a range whose driver lock is
	// still being acquired is never reported as held to a second caller.
	// Unlock does not take it: releasing must not wait for a Lock that is
	// blocked on another process.
	acquire sync.Mutex
	mu      sync.Mutex
	segs    []lockSeg // sorted, disjoint, every count > 0
}

type lockSeg struct {
	start, end int64
	holders    int // every holder, shared or exclusive
	excl       int // exclusive holders
}

// span is a byte range [start, end).
type span struct{ start, end int64 }

func (s span) overlaps(o span) bool { return s.start < o.end && o.start < s.end }

// lockEnd turns a driver (off, length) pair into an end offset: length 0
// means "to end of file".
func lockEnd(off, length int64) int64 {
	if length == 0 || off > math.MaxInt64-length {
		return math.MaxInt64
	}
	return off + length
}

// driverLen is the inverse of lockEnd.
func driverLen(s span) int64 {
	if s.end == math.MaxInt64 {
		return 0
	}
	return s.end - s.start
}

// split makes sure a segment boundary exists at every offset of cuts
// inside [start, end), filling the gaps with zero-count segments, and
// returns the index range of the segments covering [start, end).
func (t *lockTable) split(start, end int64) (int, int) {
	var out []lockSeg
	pos := start
	for _, s := range t.segs {
		if s.end <= start || s.start >= end {
			out = append(out, s)
			continue
		}
		if s.start < start {
			left := s
			left.end = start
			out = append(out, left)
			s.start = start
		}
		if pos < s.start {
			out = append(out, lockSeg{start: pos, end: s.start})
		}
		if s.end > end {
			right := s
			right.start = end
			s.end = end
			out = append(out, s, right)
			pos = end
			continue
		}
		out = append(out, s)
		pos = s.end
	}
	if pos < end {
		out = append(out, lockSeg{start: pos, end: end})
	}
	sortSegs(out)
	t.segs = out
	i := 0
	for i < len(t.segs) && t.segs[i].end <= start {
		i++
	}
	j := i
	for j < len(t.segs) && t.segs[j].start < end {
		j++
	}
	return i, j
}

func sortSegs(s []lockSeg) {
	// Insertion sort: split appends nearly in order.
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].start < s[j-1].start; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// compact drops free segments and merges equal neighbours.
func (t *lockTable) compact() {
	out := t.segs[:0]
	for _, s := range t.segs {
		if s.holders == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].end == s.start && out[n-1].holders == s.holders && out[n-1].excl == s.excl {
			out[n-1].end = s.end
			continue
		}
		out = append(out, s)
	}
	t.segs = out
}

// appendSpan appends s to list, merging it with the last span when they touch.
func appendSpan(list []span, s span) []span {
	if n := len(list); n > 0 && list[n-1].end == s.start {
		list[n-1].end = s.end
		return list
	}
	return append(list, s)
}

// Lock takes [off, off+length) for one more holder, locking the parts of
// the driver file that need it (waiting for other processes' locks).
func (t *lockTable) Lock(off, length int64, exclusive bool) error {
	end := lockEnd(off, length)
	if off < 0 || length < 0 || end <= off {
		return t.inner.Lock(off, length, exclusive) // let the driver reject it
	}
	t.acquire.Lock()
	defer t.acquire.Unlock()
	t.mu.Lock()
	i, j := t.split(off, end)
	var need []span
	for k := i; k < j; k++ {
		s := &t.segs[k]
		if s.holders == 0 || (exclusive && s.excl == 0) {
			need = appendSpan(need, span{s.start, s.end})
		}
		s.holders++
		if exclusive {
			s.excl++
		}
	}
	t.compact()
	t.mu.Unlock()
	for n, s := range need {
		if err := t.inner.Lock(s.start, driverLen(s), exclusive); err != nil {
			// Undo: release our count; free ranges are unlocked.
			for _, u := range t.release(off, end, exclusive) {
				if !containsSpan(need[n:], u) {
					t.inner.Unlock(u.start, driverLen(u))
				}
			}
			return err
		}
	}
	return nil
}

func containsSpan(list []span, s span) bool {
	for _, l := range list {
		if l.start <= s.start && s.end <= l.end {
			return true
		}
	}
	return false
}

// Unlock releases one holder of [off, off+length) and unlocks the driver
// file where no holder is left.
func (t *lockTable) Unlock(off, length int64, exclusive bool) error {
	end := lockEnd(off, length)
	if off < 0 || length < 0 || end <= off {
		return t.inner.Unlock(off, length)
	}
	var first error
	for _, s := range t.release(off, end, exclusive) {
		if err := t.inner.Unlock(s.start, driverLen(s)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// release decrements the counts of [start, end) and returns the ranges
// that became free. Releasing a range nobody holds is ignored.
func (t *lockTable) release(start, end int64, exclusive bool) []span {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, j := t.split(start, end)
	var free []span
	for k := i; k < j; k++ {
		s := &t.segs[k]
		if s.holders == 0 {
			continue
		}
		s.holders--
		if exclusive && s.excl > 0 {
			s.excl--
		}
		if s.holders == 0 {
			free = appendSpan(free, span{s.start, s.end})
		}
	}
	t.compact()
	return free
}
