package coll

import (
	"math"
	"sync/atomic"

	"github.com/collio/collio/driver"
)

// EndOfFile lets a collective read leave finding the end of the file to
// its caller, which agrees on it in a step it makes anyway (one word of
// its closing Allgather), instead of a file size asked by one aggregator
// and broadcast in every call: on a network file system the size is a
// round trip to the servers, and the broadcast a collective step more.
//
// A strategy that supports it takes it (Take), notes where its
// aggregators' reads came up short (Found), and returns the access's
// full size; the caller then agrees on the smallest end found by any
// rank and counts the access's bytes before it (Access.BytesBefore).
// That is the count a broadcast size gives: a rank's pieces past the end
// were read by some aggregator, whose read came up short at or before
// them; every end found is at or past the true one.
//
// The zero value is ready; a nil *EndOfFile is never taken.
type EndOfFile struct {
	taken bool
	end   atomic.Int64 // the smallest end found, plus 1; 0: none
}

// Take reports whether the caller agrees on the end (e is not nil), and
// marks it taken.
func (e *EndOfFile) Take() bool {
	if e == nil {
		return false
	}
	e.taken = true
	return true
}

// Taken reports whether a strategy took e.
func (e *EndOfFile) Taken() bool { return e != nil && e.taken }

// Found notes that a read came up short at end (the file's size there).
// Safe for concurrent use; does nothing on a nil e.
func (e *EndOfFile) Found(end int64) {
	if e == nil {
		return
	}
	for {
		old := e.end.Load()
		if old != 0 && old-1 <= end {
			return
		}
		if e.end.CompareAndSwap(old, end+1) {
			return
		}
	}
}

// FoundShort notes the end of f when a read of want bytes returned only
// got: the end is somewhere in what was read, and only the file knows
// where (the read may have been several runs). It returns f's error.
func (e *EndOfFile) FoundShort(f driver.File, got, want int64) error {
	if e == nil || got >= want {
		return nil
	}
	size, err := f.Size()
	if err != nil {
		return err
	}
	e.Found(size)
	return nil
}

// Word is the end found, as one word of a record: math.MaxUint64 when no
// read came up short.
func (e *EndOfFile) Word() uint64 {
	if e == nil {
		return math.MaxUint64
	}
	if v := e.end.Load(); v != 0 {
		return uint64(v - 1)
	}
	return math.MaxUint64
}
