package comm

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/collio/collio/internal/ioerr"
)

// RunWorld runs fn on every rank of a new in-memory world, each in its own
// goroutine, and returns the errors joined (each prefixed "rank N: "), nil
// if all succeed. A rank that returns an error or panics aborts the world,
// so ranks blocked in a collective or a receive wake up with ErrAborted
// instead of hanging.
func RunWorld(n, nodeSize int, fn func(c Comm) error) error {
	return RunWorldTimeout(n, nodeSize, 0, fn)
}

// RunWorldTimeout is RunWorld that also aborts the world after d, with a
// message (wrapping ioerr.ErrTimeout) listing which ranks are still blocked
// and in which call. Ranks stuck outside comm calls cannot be woken: after
// a grace period RunWorldTimeout returns without them and names them.
// Once the timeout fired the result is that timeout error even when every
// rank then returned nil. d <= 0 means no timeout.
func RunWorldTimeout(n, nodeSize int, d time.Duration, fn func(c Comm) error) error {
	if n < 1 {
		return ioerr.New(ioerr.ErrArg, "run_world", "a world needs at least one rank, not %d", n)
	}
	if fn == nil {
		return ioerr.New(ioerr.ErrArg, "run_world", "no function to run")
	}
	return run(NewWorld(n, nodeSize), d, fn)
}

// abortGrace bounds how long run waits for ranks to return after a timeout
// abort; woken ranks return within milliseconds, so a short run gets a
// grace as short as its timeout.
func abortGrace(timeout time.Duration) time.Duration {
	return min(2*time.Second, max(timeout, 200*time.Millisecond))
}

func run(w *World, timeout time.Duration, fn func(c Comm) error) error {
	var (
		mu       sync.Mutex
		errs     = make([]error, w.n)
		returned = make([]bool, w.n)
		left     = w.n
		allDone  = make(chan struct{})
	)
	for r := range w.n {
		w.calls[r].setRunning(true)
		go func() {
			err := runRank(w.Comm(r), fn)
			w.calls[r].setRunning(false)
			if err != nil {
				w.Abort(fmt.Errorf("rank %d: %w", r, err))
			}
			mu.Lock()
			errs[r], returned[r] = err, true
			left--
			if left == 0 {
				close(allDone)
			}
			mu.Unlock()
		}()
	}
	var timedOut error
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		select {
		case <-allDone:
		case <-timer.C:
			select {
			case <-allDone: // finished as the timer fired: not a timeout
			default:
				timedOut = fmt.Errorf("%w after %v; %s", ioerr.ErrTimeout, timeout, w.blockedReport())
				w.Abort(timedOut)
				select {
				case <-allDone:
				case <-time.After(abortGrace(timeout)):
				}
			}
		}
		timer.Stop()
	} else {
		<-allDone
	}
	mu.Lock()
	defer mu.Unlock()
	var stuck []int
	for r, ok := range returned {
		if !ok {
			stuck = append(stuck, r)
		}
	}
	err := joinRankErrors(errs, stuck)
	// Ranks may swallow the abort (or run outside comm calls and never see
	// it) and return nil: the run still did not finish in time.
	if timedOut != nil && !errors.Is(err, timedOut) {
		err = errors.Join(timedOut, err)
	}
	return err
}

// runRank calls fn, turning a panic into an error that carries the stack.
func runRank(c Comm, fn func(Comm) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(c)
}

// joinRankErrors lists each rank's own error, and collapses the ranks that
// only failed because another rank aborted the world into one entry, so
// that one failure among thousands of ranks reads as one failure.
func joinRankErrors(errs []error, stuck []int) error {
	var list []error
	var abortedRanks []int
	var firstAborted error
	for r, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrAborted):
			if firstAborted == nil {
				firstAborted = fmt.Errorf("rank %d: %w", r, err)
			}
			abortedRanks = append(abortedRanks, r)
		default:
			list = append(list, fmt.Errorf("rank %d: %w", r, err))
		}
	}
	switch len(abortedRanks) {
	case 0:
	case 1:
		list = append(list, firstAborted)
	default:
		list = append(list, fmt.Errorf("%s aborted, first %w", rankList(abortedRanks), firstAborted))
	}
	if len(stuck) > 0 {
		list = append(list, fmt.Errorf("%s did not return after the abort", rankList(stuck)))
	}
	return errors.Join(list...)
}
