// Package commpool keeps the private duplicates of an application's
// communicator that collio opens files on, from one close to the next open.
//
// An open on a communicator needs a duplicate of it (so collio's messages
// never meet the application's), the node layout of its ranks, and, in the
// C library, an MPI window for the shared file pointer. Made afresh, these
// cost most of an open: MPI_Win_allocate alone is hundreds of microseconds
// with ranks sharing cores. A Pool attached to the application's
// communicator (MPI attribute caching) keeps them for the next open on it,
// and releases them when the application frees the communicator.
//
// Every rank of a communicator opens and closes its files in the same order
// (MPI orders collective calls on a communicator), so every rank's pool holds
// the same entries in the same order. Open still agrees on the entry's ID
// before using it and makes a new duplicate when the ranks disagree.
package commpool

import (
	"errors"
	"sync"

	"github.com/collio/collio/internal/comm"
)

// MaxIdle bounds the entries a pool keeps: a program that has at most this
// many files open at once on a communicator never duplicates it twice.
const MaxIdle = 4

// Keeper is implemented by communicators that can keep a Pool with them
// until they are freed.
type Keeper interface {
	Pool() *Pool
}

// Releaser is state another layer keeps with an entry (the C library's
// shared-pointer window). Release is collective over the entry's ranks.
type Releaser interface {
	Release() error
}

// Entry is a private duplicate and what was learned about it.
type Entry struct {
	Comm comm.Comm
	ID   int64

	mu     sync.Mutex
	keys   []any
	values map[any]Releaser
}

// NewEntry wraps a fresh duplicate; id is the ID the ranks agreed on.
func NewEntry(c comm.Comm, id int64) *Entry { return &Entry{Comm: c, ID: id} }

// Value returns the state kept under key, or nil.
func (e *Entry) Value(key any) Releaser {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.values[key]
}

// SetValue keeps v under key until the entry is released.
func (e *Entry) SetValue(key any, v Releaser) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.values == nil {
		e.values = make(map[any]Releaser)
	}
	if _, ok := e.values[key]; !ok {
		e.keys = append(e.keys, key)
	}
	e.values[key] = v
}

// Release releases the kept state, newest first, then frees the duplicate.
// It is collective over the entry's ranks.
func (e *Entry) Release() error {
	e.mu.Lock()
	keys, values := e.keys, e.values
	e.keys, e.values = nil, nil
	e.mu.Unlock()
	var errs []error
	for i := len(keys) - 1; i >= 0; i-- {
		if err := values[keys[i]].Release(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := e.Comm.Free(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Pool holds the idle entries of one application communicator.
type Pool struct {
	mu     sync.Mutex
	idle   []*Entry
	nextID int64
	closed bool
}

// Candidate is the ID of the entry Take would give (the most recently put
// back, so files opened and closed one at a time reuse one duplicate), or 0
// if the pool is empty; and the ID a new entry would get.
func (p *Pool) Candidate() (reuse, next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 && !p.closed {
		reuse = p.idle[n-1].ID
	}
	return reuse, p.nextID + 1
}

// Take removes and returns the idle entry with the given ID, or nil.
func (p *Pool) Take(id int64) *Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if e := p.idle[i]; e.ID == id {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return e
		}
	}
	return nil
}

// Made records that the ranks made a new entry with the given ID.
func (p *Pool) Made(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID = max(p.nextID, id)
}

// Put gives an entry back for the next open. It reports false when the
// pool is full or released: the caller then releases the entry itself.
func (p *Pool) Put(e *Entry) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= MaxIdle {
		return false
	}
	p.idle = append(p.idle, e)
	return true
}

// Poison is for ranks that found their pools differ: the idle entries are
// dropped without MPI calls (releasing them would be collective calls the
// ranks do not make alike) and the pool keeps nothing from now on.
func (p *Pool) Poison() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle, p.closed = nil, true
}

// Release releases every idle entry (oldest first, the same order on every
// rank) and refuses later Puts. With free false (MPI is finalizing) entries
// are dropped without MPI calls.
func (p *Pool) Release(free bool) error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	if !free {
		return nil
	}
	var errs []error
	for _, e := range idle {
		if err := e.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Of returns c's pool, looking through wrappers (Unwrap), or nil if c
// cannot keep one.
func Of(c comm.Comm) *Pool {
	if k, ok := comm.As[Keeper](c); ok {
		return k.Pool()
	}
	return nil
}

// Congruent is implemented by communicators that can tell whether another
// has the same ranks in the same order (MPI_Comm_compare: MPI_IDENT or
// MPI_CONGRUENT), which is all a private duplicate needs to serve for it.
type Congruent interface {
	CongruentWith(other comm.Comm) bool
}

// Spares are entries made ahead of any open (adio.Warm at MPI_Init) that
// an open on any communicator congruent with theirs may take. Every rank of
// such a communicator holds the same spares (all were made collectively
// over that same group), so all offer the same one.
var spares struct {
	sync.Mutex
	list []*Entry
}

// spareBase marks spare IDs, apart from those pools hand out.
const spareBase = 1 << 62

// AddSpare makes e a spare; its ID becomes a spare ID (n-th spare).
func AddSpare(e *Entry) {
	spares.Lock()
	defer spares.Unlock()
	e.ID = spareBase + int64(len(spares.list)) + 1
	spares.list = append(spares.list, e)
}

// SpareFor returns the ID of the first spare that can serve c, or 0.
func SpareFor(c comm.Comm) int64 {
	k, ok := comm.As[Congruent](c)
	if !ok {
		return 0
	}
	spares.Lock()
	defer spares.Unlock()
	for _, e := range spares.list {
		if e != nil && k.CongruentWith(e.Comm) {
			return e.ID
		}
	}
	return 0
}

// TakeSpare removes and returns the spare with the given ID, or nil.
func TakeSpare(id int64) *Entry {
	spares.Lock()
	defer spares.Unlock()
	for i, e := range spares.list {
		if e != nil && e.ID == id {
			spares.list[i] = nil
			return e
		}
	}
	return nil
}

// IsSpare reports whether id is a spare's.
func IsSpare(id int64) bool { return id > spareBase }
