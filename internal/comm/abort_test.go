package comm

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collio/collio/internal/ioerr"
)

// TestAbortWakesEveryWaiter: ranks blocked in each kind of wait are all
// woken by Abort with an error wrapping ErrAborted and the cause, and
// later calls fail the same way.
func TestAbortWakesEveryWaiter(t *testing.T) {
	const n = 6
	w := NewWorld(n, 2)
	cause := errors.New("disk on fire")
	blocked := map[int]func(c Comm) error{
		0: func(c Comm) error { return c.Barrier() }, // rank 5 never joins
		1: func(c Comm) error { return c.Bcast(make([]byte, 4), 0) },
		2: func(c Comm) error { return recvWait(c.Irecv(make([]byte, 1), 3, 9)) },
		3: func(c Comm) error { return recvWait(c.Issend([]byte{1}, 4, 9)) },
		4: func(c Comm) error { return recvWait(c.Irecv(make([]byte, 1), AnySource, 8)) },
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, call := range blocked {
		wg.Go(func() { errs[r] = call(w.Comm(r)) })
	}
	time.Sleep(50 * time.Millisecond) // let them block
	w.Abort(cause)
	wg.Wait()
	for r := range blocked {
		if !errors.Is(errs[r], ErrAborted) || !errors.Is(errs[r], cause) {
			t.Errorf("rank %d: %v, want ErrAborted and the cause", r, errs[r])
		}
	}
	if err := w.Comm(5).Barrier(); !errors.Is(err, ErrAborted) {
		t.Errorf("later Barrier: %v", err)
	}
	if _, err := w.Comm(5).Isend(nil, 0, 0); !errors.Is(err, ErrAborted) {
		t.Errorf("later Isend: %v", err)
	}
}

func recvWait(r Request, err error) error {
	if err != nil {
		return err
	}
	return r.Wait()
}

// TestAbortCompletesPolledRequests: Test on a pending request after an
// abort reports done with the abort error, so polling loops end.
func TestAbortCompletesPolledRequests(t *testing.T) {
	w := NewWorld(2, 0)
	c := w.Comm(0)
	recv, err := c.Irecv(make([]byte, 1), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	ag, err := c.Iallgather([]byte{1}, make([]byte, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Request{recv, ag} {
		if done, err := r.Test(); done || err != nil {
			t.Fatalf("pending request tests done=%v err=%v", done, err)
		}
	}
	w.Abort(nil)
	for _, r := range []Request{recv, ag} {
		done, err := r.Test()
		if !done || !errors.Is(err, ErrAborted) {
			t.Fatalf("after abort: done=%v err=%v", done, err)
		}
	}
	// A send after the abort must not reach the withdrawn receive.
	if _, err := w.Comm(1).Isend([]byte{7}, 0, 0); !errors.Is(err, ErrAborted) {
		t.Fatalf("send after abort: %v", err)
	}
}

func TestRunWorldPanicAbortsTheOthers(t *testing.T) {
	err := RunWorld(8, 3, func(c Comm) error {
		if c.Rank() == 3 {
			var m map[string]int
			m["boom"]++ // panics
		}
		return c.Barrier()
	})
	if err == nil {
		t.Fatal("no error from a panicking rank")
	}
	msg := err.Error()
	for _, want := range []string{"rank 3: panic", "assignment to entry in nil map", "goroutine", "ranks 0-2, 4-7 aborted"} {
		if !contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if !errors.Is(err, ErrAborted) {
		t.Error("joined error does not wrap ErrAborted")
	}
	t.Logf("report: %.300s...", err)
}

func TestRunWorldEarlyErrorWakesReceivers(t *testing.T) {
	sentinel := errors.New("bad input")
	err := RunWorld(4, 0, func(c Comm) error {
		if c.Rank() == 0 {
			return sentinel
		}
		return recvWait(c.Irecv(make([]byte, 1), 0, 0)) // never sent
	})
	if !errors.Is(err, sentinel) || !contains(err.Error(), "rank 0: bad input") {
		t.Fatalf("got %v", err)
	}
}

func TestRunWorldSuccess(t *testing.T) {
	if err := RunWorld(16, 4, func(c Comm) error { return c.Barrier() }); err != nil {
		t.Fatal(err)
	}
	if err := RunWorld(0, 0, func(Comm) error { return nil }); !errors.Is(err, ioerr.ErrArg) {
		t.Fatalf("zero ranks: %v", err)
	}
}

// TestRunWorldTimeoutNamesBlockedRanks: a deadlock (everyone receives,
// nobody sends; one rank waits in a Barrier) ends with a report.
func TestRunWorldTimeoutNamesBlockedRanks(t *testing.T) {
	err := RunWorldTimeout(5, 0, 100*time.Millisecond, func(c Comm) error {
		if c.Rank() == 4 {
			return c.Barrier()
		}
		return recvWait(c.Irecv(make([]byte, 1), AnySource, 3))
	})
	if err == nil {
		t.Fatal("deadlock returned nil")
	}
	msg := err.Error()
	for _, want := range []string{"timed out after 100ms", "Wait(Irecv) peer any tag 3 on comm 0: ranks 0-3", "Barrier #0 on comm 0: rank 4"} {
		if !contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("report: %v", err)
}

func TestRunWorldTimeoutGivesUpOnRanksOutsideComm(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	err := RunWorldTimeout(2, 0, 50*time.Millisecond, func(c Comm) error {
		if c.Rank() == 1 {
			<-release // stuck where Abort cannot reach
			return nil
		}
		return c.Barrier()
	})
	msg := fmt.Sprint(err)
	for _, want := range []string{"running outside comm calls: rank 1", "rank 1 did not return"} {
		if !contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestRunWorldTimeoutReportsSwallowedAbort: ranks that ignore the error the
// timeout's abort gives them, or never make a comm call to see it, and
// return nil still make the run fail with the timeout, naming what was
// blocked.
func TestRunWorldTimeoutReportsSwallowedAbort(t *testing.T) {
	err := RunWorldTimeout(3, 0, 50*time.Millisecond, func(c Comm) error {
		switch c.Rank() {
		case 0:
			_ = recvWait(c.Irecv(make([]byte, 1), 1, 7)) // never sent; error dropped
		case 1:
			_ = c.Barrier() // error dropped
		case 2:
			time.Sleep(100 * time.Millisecond) // outside comm calls, returns within the grace
		}
		return nil
	})
	if !errors.Is(err, ioerr.ErrTimeout) {
		t.Fatalf("got %v, want a timeout error", err)
	}
	msg := err.Error()
	for _, want := range []string{"timed out after 50ms", "Wait(Irecv) peer 1 tag 7 on comm 0: rank 0",
		"Barrier #0 on comm 0: rank 1", "running outside comm calls: rank 2"} {
		if !contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// TestRunWorldTimeoutNotHitIsNil: a run that ends well before its timeout
// succeeds.
func TestRunWorldTimeoutNotHitIsNil(t *testing.T) {
	for range 100 {
		if err := RunWorldTimeout(4, 2, time.Minute, func(c Comm) error { return c.Barrier() }); err != nil {
			t.Fatal(err)
		}
	}
}
