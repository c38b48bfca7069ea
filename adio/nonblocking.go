package adio

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/gocores"
	"github.com/collio/collio/internal/ioerr"
)

// Nonblocking collective transfers (MPI_File_iwrite_at_all and the like).
//
// The start call takes the call's place in the file's order of collective
// calls (its sequence number, the file pointer) on the caller's goroutine,
// then the transfer runs on a goroutine of its own as an ordinary
// collective call of an operation File (forOp) on a private communicator:
// one of opSlots duplicates of the file's communicator, the one of slot
// seq mod opSlots. Operations that share a slot run one after the other on
// every rank, in start order, so their collectives and messages are
// matched in the same order everywhere (no strategy receives from any
// source); operations of different slots progress at once. Where
// goroutines may not call MPI at once (below MPI_THREAD_MULTIPLE), the
// transfer runs inside the start call instead.

// opSlots bounds the operations that progress at the same time on a file.
const opSlots = 4

// Request is a nonblocking collective transfer in progress.
type Request struct {
	f    *File
	op   string
	seq  int64
	done chan struct{}
	// Set by the operation's goroutine before done is closed.
	n   int64
	err error
	of  *File // the operation File, for its metrics and owed error
	// waited: Wait or a successful Test has handed the outcome over.
	waited bool
	// released: the caller will not wait (its start failed on this rank,
	// or C freed the request); the file completes it, and does not name it
	// at close. Set from any thread.
	released atomic.Bool
}

// opSlot is one private communicator for operations, the done channel of
// the last operation started on it, and what its operations hand on to
// the next one, as a file's blocking calls do: the exchange buffers, and
// the pattern the automatic choice learned (repeatsIndependent). The
// slot's operations run in start order on every rank, so every rank
// learns the same.
type opSlot struct {
	comm    comm.Comm
	last    chan struct{}
	buffers coll.Buffers
	learned learning // without checks: operations recheck in the foreground
}

// lend gives the operation about to run on the slot the slot's buffers
// and, per direction, the longer of two learned patterns: the slot's
// operations', or the file's blocking calls' when the operation started
// (forOp copied it). Both are the same on every rank at this point.
func (s *opSlot) lend(of *File) {
	of.learned.takeLonger(&s.learned)
	of.buffers = s.buffers
}

// keep takes back what lend gave, as the operation left it.
func (s *opSlot) keep(of *File) {
	s.buffers, s.learned = of.buffers, of.learned.history()
	of.buffers = coll.Buffers{}
}

// threadLeveler is implemented by communicators that know whether several
// threads may call MPI at once (internal/mpi); others (the in-memory
// communicator) allow it.
type threadLeveler interface {
	ConcurrentCalls() bool
}

func concurrentCalls(c comm.Comm) bool {
	if t, ok := comm.As[threadLeveler](c); ok {
		return t.ConcurrentCalls()
	}
	return true
}

// IWriteAtAll starts writing a at offset off (etypes) collectively. The
// buffer must not change until the request completes.
func (f *File) IWriteAtAll(a Access, off int64) (*Request, error) {
	return f.start("iwrite_at_all", true, a, func() int64 { return off }, false)
}

// IReadAtAll starts reading into a from offset off (etypes) collectively.
func (f *File) IReadAtAll(a Access, off int64) (*Request, error) {
	return f.start("iread_at_all", false, a, func() int64 { return off }, false)
}

// IWriteAll starts writing a at the individual file pointer collectively;
// the pointer moves past the data at once, as MPI asks.
func (f *File) IWriteAll(a Access) (*Request, error) {
	return f.start("iwrite_all", true, a, f.Position, true)
}

// IReadAll starts reading into a from the individual file pointer
// collectively; the pointer moves past the data asked for at once.
func (f *File) IReadAll(a Access) (*Request, error) {
	return f.start("iread_all", false, a, f.Position, true)
}

func (f *File) start(op string, write bool, a Access, offset func() int64, advance bool) (*Request, error) {
	if err := f.usable(op); err != nil {
		return nil, err
	}
	// The operation's aggregators must not write or read where an earlier
	// write's syncs are still under way (publish.go).
	if err := f.settle(op); err != nil {
		return nil, err
	}
	off := offset()
	v := f.View()
	if advance && a.Err == nil {
		// A transfer whose range cannot be placed fails in the operation
		// and leaves the pointer, which would wrap.
		if n, ok := a.checkedSize(); ok {
			if _, ok := dataPos(v, off, n); ok {
				f.mu.Lock()
				f.fp = off + n/v.Etype.Size()
				f.mu.Unlock()
			}
		}
	}
	// The operation File makes the call's ordinary sequence and digest
	// step; the parent steps alike, so its synchronizing calls count it.
	seq, digest := f.seq, f.digest
	f.stepCall(write)
	slot := &f.slots[seq%opSlots]
	if slot.comm == nil {
		// Collective: every rank starts its operations in the same order,
		// so every rank makes this slot's duplicate in the same call.
		dc, err := f.comm.Dup()
		if err != nil {
			return nil, f.wrap(err, op)
		}
		slot.comm = shaped(dc)
	}
	of := f.forOp(slot.comm, seq, digest)
	r := &Request{f: f, op: op, seq: seq + 1, done: make(chan struct{}), of: of}
	prev := slot.last
	slot.last = r.done
	f.pending = append(f.pending, r)
	run := func() {
		if prev != nil {
			<-prev
		}
		slot.lend(of)
		r.n, r.err = of.collective(blockingOp(op), write, a, func() int64 { return off }, false)
		slot.keep(of)
		close(r.done)
	}
	if concurrentCalls(f.comm) {
		enoughProcs()
		go run()
	} else {
		run()
	}
	return r, nil
}

var procsRaised sync.Once

// enoughProcs gives the Go runtime at least two Ps once a transfer runs in
// the background: a goroutine waiting inside a C call (MPI, a batch of
// system calls) keeps its P until the runtime takes it back, up to
// milliseconds later, so with one P (gocores.Share, several ranks per core)
// the goroutines the transfer itself starts would wait that long.
func enoughProcs() {
	procsRaised.Do(func() {
		if runtime.GOMAXPROCS(0) < 2 {
			runtime.GOMAXPROCS(2)
		}
		gocores.RestoreMonitor()
	})
}

// blockingOp names the blocking form of a nonblocking operation: the two
// meet in one collective call, and the entry record carries its code.
func blockingOp(op string) string { return strings.TrimPrefix(op, "i") }

// forOp makes the File an operation runs its collective call on: the
// parent's file, view and settings, with its own communicator, sequence
// numbers, metrics and buffers.
func (f *File) forOp(c comm.Comm, seq int64, digest uint64) *File {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &File{
		comm: c, path: f.path, stack: f.stack, f: f.f, mode: f.mode, hints: f.hints, cfg: f.cfg,
		configList: f.configList, nodes: f.nodes, aggs: f.aggs, layout: f.layout, dopts: f.dopts,
		view: f.view, atomic: f.atomic, seq: seq, digest: digest, viewsContiguous: f.viewsContiguous, viewShape: f.viewShape,
		learned: f.learned.history(), opFile: true,
		// Operations may run at once: none read-modify-writes (see sieves).
		cached: f.cached, cacheOff: f.cacheOff, dsWriteOK: false, stderr: f.stderr,
	}
}

// Wait waits for the transfer and returns how many bytes it moved. An
// error owed by a transfer that did not agree (collio_error_agreement=
// deferred) also comes out at the file's next synchronizing call, as for
// a blocking call.
func (r *Request) Wait() (int64, error) {
	if r == nil {
		return 0, ioerr.New(ioerr.ErrArg, "wait", "request is nil")
	}
	<-r.done
	r.complete()
	return r.n, r.err
}

// Test reports whether the transfer completed, and then its outcome.
func (r *Request) Test() (done bool, n int64, err error) {
	if r == nil {
		return false, 0, ioerr.New(ioerr.ErrArg, "test", "request is nil")
	}
	select {
	case <-r.done:
		r.complete()
		return true, r.n, r.err
	default:
		return false, 0, nil
	}
}

// Done is closed when the transfer has completed (Wait then does not
// block).
func (r *Request) Done() <-chan struct{} { return r.done }

// complete hands the finished operation's metrics, owed error and cache
// state over to its file, once.
func (r *Request) complete() {
	if r.waited {
		return
	}
	r.waited = true
	f, of := r.f, r.of
	f.mu.Lock()
	f.last = of.last
	f.last.Op = r.op
	f.total.Add(of.last)
	f.cacheOff = f.cacheOff || of.cacheOff
	f.mu.Unlock()
	if of.owed != nil && f.owed == nil {
		f.owed = of.owed
	}
	if of.broken != nil && f.broken == nil {
		// The slot's communicator is unusable, and with it the order of
		// the file's operations.
		f.broken = of.broken
	}
	for i, p := range f.pending {
		if p == r {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			break
		}
	}
}

// WaitAll waits for every request and returns the first error (in the
// order given), or nil.
func WaitAll(reqs ...*Request) error {
	var first error
	for _, r := range reqs {
		if _, err := r.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Release gives up the request: the caller will not wait for it (its
// start failed on this rank, and the others learn that from their Wait).
// The file completes it; Close does not count it as not waited for.
func (r *Request) Release() { r.released.Store(true) }

// WaitAny waits until one of the requests not yet completed completes, and
// returns its index and outcome; index -1 when every request was nil or
// already completed (by Wait, Test or an earlier WaitAny).
func WaitAny(reqs ...*Request) (index int, n int64, err error) {
	cases := make([]reflect.SelectCase, 0, len(reqs))
	which := make([]int, 0, len(reqs))
	for i, r := range reqs {
		if r != nil && !r.waited {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.done)})
			which = append(which, i)
		}
	}
	if len(cases) == 0 {
		return -1, 0, nil
	}
	k, _, _ := reflect.Select(cases)
	i := which[k]
	n, err = reqs[i].Wait()
	return i, n, err
}

// outstanding describes the operations started and not waited for, or "".
func (f *File) outstanding() string {
	var names []string
	for _, r := range f.pending {
		if !r.released.Load() {
			names = append(names, fmt.Sprintf("%s (call %d)", r.op, r.seq))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%d nonblocking operations not waited for: %s", len(names), strings.Join(names, ", "))
}

// finishOutstanding waits for the operations not waited for, hands their
// outcomes over, and returns an error naming them (nil if there were none).
func (f *File) finishOutstanding() error {
	s := f.outstanding()
	for _, r := range append([]*Request(nil), f.pending...) {
		r.Wait()
	}
	if s == "" {
		return nil
	}
	return f.errf(ioerr.ErrFileInUse, "close", "%s: closed once they completed; wait for each request before closing", s)
}

// freeSlots frees the operations' communicators (collective: every rank
// made the same slots).
func (f *File) freeSlots() error {
	var first error
	for i := range f.slots {
		if s := &f.slots[i]; s.comm != nil {
			if err := s.comm.Free(); err != nil && first == nil {
				first = err
			}
			*s = opSlot{}
		}
	}
	return first
}
