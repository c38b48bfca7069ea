package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_req_byte(void) { return MPI_BYTE; }
// static MPI_Request collio_request_null(void) { return MPI_REQUEST_NULL; }
// #include <sched.h>
// // Polls req until it completes or seconds pass (seconds <= 0: no limit),
// // yielding the core between tests: the whole wait is one call from Go.
// static int collio_test_until(MPI_Request *req, MPI_Status *st, double seconds, int *flag) {
// 	double end = MPI_Wtime() + seconds;
// 	for (;;) {
// 		int rc = MPI_Test(req, flag, st);
// 		if (rc != MPI_SUCCESS || *flag)
// 			return rc;
// 		if (seconds > 0 && MPI_Wtime() > end)
// 			return MPI_SUCCESS;
// 		sched_yield();
// 	}
// }
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/collio/collio/internal/comm"
)

// Request is a pending nonblocking MPI operation. Its buffers stay pinned
// (runtime.Pinner) and reachable until it completes, so MPI never writes
// into memory the garbage collector has reused. It is safe to call Test
// from several goroutines; Wait blocks its caller until completion.
type Request struct {
	mu     sync.Mutex
	req    C.MPI_Request
	status C.MPI_Status
	pin    runtime.Pinner
	call   string
	recv   bool // count comes from the status
	sent   int  // bytes moved by a send or collective
	done   bool
	err    error
	count  int
}

var _ comm.Request = (*Request)(nil)

// inflight keeps every incomplete request reachable: a request dropped
// without Wait leaks its buffers instead of letting MPI write into freed
// memory (and instead of the runtime's panic on a collected, still-pinned
// Pinner).
var inflight sync.Map // *Request → struct{}

// newRequest pins the non-empty buffers and registers the request. The
// caller then starts the MPI operation into r.req and calls r.started.
func newRequest(call string, recv bool, bufs ...[]byte) *Request {
	r := &Request{call: call, recv: recv, req: C.collio_request_null()}
	for _, b := range bufs {
		if len(b) > 0 {
			r.pin.Pin(&b[0])
		}
	}
	return r
}

// started records the outcome of the call that started the operation.
func (r *Request) started(rc C.int) error {
	if rc != C.MPI_SUCCESS {
		r.pin.Unpin()
		return newError(rc, r.call)
	}
	inflight.Store(r, struct{}{})
	return nil
}

// finish records completion with the given return code. Caller holds r.mu.
func (r *Request) finish(rc C.int, call string) {
	r.done = true
	r.pin.Unpin()
	inflight.Delete(r)
	if rc != C.MPI_SUCCESS {
		r.err = requestError(newError(rc, call+" ("+r.call+")"))
		// MPI may leave a failed request allocated (Open MPI 4.1.4 frees
		// it, checked); it is complete either way, so free what is left.
		if r.req != C.collio_request_null() {
			C.MPI_Request_free(&r.req)
		}
		return
	}
	if !r.recv {
		r.count = r.sent
		return
	}
	var n C.int
	if rc := C.MPI_Get_count(&r.status, C.collio_req_byte(), &n); rc != C.MPI_SUCCESS {
		r.err = newError(rc, "MPI_Get_count")
		return
	}
	r.count = int(n)
}

// requestError maps a truncated receive to comm.ErrTruncate while keeping
// the MPI details reachable with errors.As.
func requestError(e *Error) error {
	if e.IsTruncate() {
		return fmt.Errorf("%w: %w", comm.ErrTruncate, e)
	}
	return e
}

// Wait is MPI_Wait: it blocks until the operation completes and returns
// its error (comm.ErrTruncate for a receive whose message was too long).
func (r *Request) Wait() error {
	if r == nil {
		return errors.New("mpi: Wait on a nil Request")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		beforeWait()
		r.finish(C.MPI_Wait(&r.req, &r.status), "MPI_Wait")
	}
	return r.err
}

// Test is MPI_Test. While another goroutine is inside Wait it reports
// false rather than blocking.
func (r *Request) Test() (bool, error) {
	if r == nil {
		return false, errors.New("mpi: Test on a nil Request")
	}
	if !r.mu.TryLock() {
		return false, nil
	}
	defer r.mu.Unlock()
	if r.done {
		return true, r.err
	}
	var flag C.int
	rc := C.MPI_Test(&r.req, &flag, &r.status)
	if rc == C.MPI_SUCCESS && flag == 0 {
		return false, nil
	}
	r.finish(rc, "MPI_Test")
	return true, r.err
}

// TestFor polls the request until it completes or d passes (d <= 0: until
// it completes), inside one call into C that yields the core between
// tests. Waiting for peers this way costs about what a blocking MPI call
// does, less than a cgo call per test from Go, yet gives up at the
// deadline, so that ranks in different collective calls get an error
// instead of a hang. It reports false on timeout; the request is then
// still pending.
func (r *Request) TestFor(d time.Duration) (bool, error) {
	if r == nil {
		return false, errors.New("mpi: TestFor on a nil Request")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return true, r.err
	}
	var flag C.int
	beforeWait()
	rc := C.collio_test_until(&r.req, &r.status, C.double(d.Seconds()), &flag)
	if rc == C.MPI_SUCCESS && flag == 0 {
		return false, nil
	}
	r.finish(rc, "MPI_Test")
	return true, r.err
}

// Count is the number of bytes received (MPI_Get_count on the status), or
// sent, once the request has completed; -1 before.
func (r *Request) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		return -1
	}
	return r.count
}

// Source is the rank a completed receive got its message from (useful
// with comm.AnySource); -1 before completion or for other requests.
func (r *Request) Source() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done || !r.recv || r.err != nil {
		return -1
	}
	return int(r.status.MPI_SOURCE)
}

// Waitall waits for every request and returns the first error in
// argument order; nil requests are skipped.
//
// It deliberately calls MPI_Wait per request rather than one MPI_Waitall:
// with MPI_THREAD_MULTIPLE, Open MPI 4.1.4's MPI_Waitall never returns on
// some rank when one of the receives is truncated (reproduced in plain C,
// 3 ranks, first iteration), and without threads it does not report the
// truncation of a message a rank sent to itself. MPI_Wait gets both right,
// and progress is global, so waiting in turn costs nothing measurable.
func Waitall(reqs ...*Request) error {
	var first error
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if err := r.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
