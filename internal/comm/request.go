package comm

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// request is a point-to-point operation of the in-memory communicator.
// Whoever matches a send with a receive copies the data and completes the
// requests; a request still queued when the world aborts is withdrawn
// from its mailbox, so no buffer is touched after Wait has returned.
type request struct {
	w     *World
	owner int // world rank, for blocked reports
	ci    callInfo
	done  chan struct{}
	err   error // written before done is closed
	count int

	// A receive: its buffer and what it matches.
	buf []byte
	src int
	tag int

	// While queued: the mailbox it waits in, and for Issend its envelope.
	box *mailbox
	env *envelope
}

// envelope is a send waiting in the receiver's mailbox.
type envelope struct {
	src, tag int
	data     []byte   // a copy for Isend; the caller's buffer for Issend
	sender   *request // Issend's request, completed on match; nil for Isend
}

var alwaysClosed = closedChan()

// completedSend is the request of a send that finished when it started.
func completedSend(w *World, n int) *request {
	return &request{w: w, done: alwaysClosed, count: n}
}

func (r *request) complete(count int, err error) {
	r.count, r.err = count, err
	close(r.done)
}

// deliver copies a matched message into the receive buffer and completes r.
func (r *request) deliver(data []byte, src int) {
	n := copy(r.buf, data)
	var err error
	if len(data) > len(r.buf) {
		err = fmt.Errorf("%w: %d-byte message from rank %d (tag %d) into a %d-byte buffer",
			ErrTruncate, len(data), src, r.tag, len(r.buf))
	}
	r.complete(n, err)
}

func (r *request) Wait() error {
	if err := r.w.wait(r.owner, r.ci, r.done); err != nil {
		return r.withdraw(err)
	}
	return r.err
}

func (r *request) Test() (bool, error) {
	if isClosed(r.done) {
		return true, r.err
	}
	if err := r.w.aborted(); err != nil {
		return true, r.withdraw(err)
	}
	yieldToOtherRanks()
	return false, nil
}

func (r *request) Count() int {
	if !isClosed(r.done) {
		return 0
	}
	return r.count
}

// withdraw ends r after an abort: if it is still queued it is removed and
// fails with abortErr; if a partner has already matched it, the partner is
// copying right now and r's real outcome follows shortly.
func (r *request) withdraw(abortErr error) error {
	box := r.box
	if box == nil { // never queued: it completed when it started
		<-r.done
		return r.err
	}
	box.mu.Lock()
	removed := false
	if r.env != nil {
		if i := slices.Index(box.unexpected, r.env); i >= 0 {
			box.unexpected = slices.Delete(box.unexpected, i, i+1)
			removed = true
		}
	} else if i := slices.Index(box.posted, r); i >= 0 {
		box.posted = slices.Delete(box.posted, i, i+1)
		removed = true
	}
	box.mu.Unlock()
	if removed {
		r.complete(0, abortErr)
	}
	<-r.done
	return r.err
}

// yieldToOtherRanks is called when Test finds a request pending. The ranks
// that would complete it are goroutines too, and a rank polling Test in a
// loop must not starve them of the few cores there are.
func yieldToOtherRanks() { runtime.Gosched() }

// collRequest is the request of a nonblocking collective.
type collRequest struct {
	mu sync.Mutex // Wait and Test may race; the call advances one step at a time
	cc *collCall
}

func (q *collRequest) Wait() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cc.advance(true)
	return q.cc.err
}

func (q *collRequest) Test() (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.cc.advance(false) {
		yieldToOtherRanks()
		return false, nil
	}
	return true, q.cc.err
}

func (q *collRequest) Count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cc.stage != stageDone || q.cc.err != nil {
		return 0
	}
	return q.cc.copied
}
