package driver

// A decorator is a File over another File: the faulty driver, the E10
// cache, the striped drivers over ufs. What a decorator does not do itself
// it forwards, in one of two ways:
//
//   - batched runs (RunWriter, RunReader): a decorator that changes
//     writes or reads implements them and passes the batches on with
//     WriteRuns and ReadRuns, so that batching reaches the file system
//     through any stack of decorators;
//   - capabilities that only one layer has (DirectFile, WriteBack): As
//     finds that layer through the Unwrap chain, so a decorator without
//     them needs nothing but Unwrap.

// Unwrapper is a decorator: Unwrap returns the File it wraps.
type Unwrapper interface {
	Unwrap() File
}

// As returns the first file in the chain f, f.Unwrap(), f.Unwrap().Unwrap(),
// ... that is a T; ok is false when none is.
func As[T any](f File) (t T, ok bool) {
	for f != nil {
		if t, ok := f.(T); ok {
			return t, true
		}
		u, ok := f.(Unwrapper)
		if !ok {
			break
		}
		f = u.Unwrap()
	}
	return t, false
}

// WriteBack is a File that holds written data back from the file it
// wraps and copies it there later (the E10 cache). Collective calls drain
// it where other ranks are about to read or write, and make every rank
// give it up once one rank did (so that the ranks agree on whether data
// is held back).
type WriteBack interface {
	// Pending returns the bounds [start, end) of the data held back and
	// not copied yet; start == end when there is none.
	Pending() (start, end int64)
	// Unsynced returns the bounds of the data held back, or copied to the
	// wrapped file since SyncCopies last synced it: what another node's
	// client may not see yet.
	Unsynced() (start, end int64)
	// SyncCopies syncs the wrapped file (what was copied reaches every
	// node).
	SyncCopies() error
	// Drain copies everything held back and waits for the copies; copy
	// errors are kept for the next Sync or Close.
	Drain()
	// DrainRanges copies what is held back inside the ranges ([start,
	// end) pairs) and waits; it returns the copy error when data of the
	// ranges is still held back afterwards.
	DrainRanges(ranges [][2]int64) error
	// DropPast forgets held-back data past size whose copy failed, for a
	// file another rank truncated to size.
	DropPast(size int64) error
	// FellBack reports whether the file gave up holding data back and
	// writes through.
	FellBack() bool
	// FallBack makes it write through from now on.
	FallBack()
}

// WriteBackOf returns the WriteBack layer of f's decorator chain.
func WriteBackOf(f File) (WriteBack, bool) { return As[WriteBack](f) }
