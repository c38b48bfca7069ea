package cache

import (
	"errors"
	"sync"
	"time"
)

// Deferred closes in progress, by global file (pathKey). An entry leaves
// the registry when it finished without error, or once a waiter has
// collected its error: each error is reported exactly once.
var closing = struct {
	mu sync.Mutex
	m  map[string][]*pendingClose
}{m: make(map[string][]*pendingClose)}

type pendingClose struct {
	key     string
	done    chan struct{}
	err     error
	claimed bool
}

func registerClose(key string) *pendingClose {
	p := &pendingClose{key: key, done: make(chan struct{})}
	closing.mu.Lock()
	closing.m[key] = append(closing.m[key], p)
	closing.mu.Unlock()
	return p
}

// finish records the outcome of a deferred close.
func (p *pendingClose) finish(err error) {
	closing.mu.Lock()
	p.err = err
	if err == nil {
		removeLocked(p)
	}
	closing.mu.Unlock()
	close(p.done)
}

func removeLocked(p *pendingClose) {
	list := closing.m[p.key]
	for i, q := range list {
		if q == p {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(closing.m, p.key)
	} else {
		closing.m[p.key] = list
	}
}

// WaitPath waits for the deferred closes of globalPath (any driver prefix,
// any rank of this process) and returns their errors not reported yet.
// Opening a file calls it first, so that a new open never races with the
// copy of the previous one.
func WaitPath(globalPath string) error {
	key := pathKey(globalPath)
	return wait(func(k string) bool { return k == key })
}

// WaitAll waits for every deferred close of the process and returns the
// errors not reported yet. MPI finalisation (the Go API's Finalize, the C
// library's MPI_Finalize) must call it: a deferred close's copy is
// otherwise cut short when the process exits (its journal stays, and
// collio recover completes the global file).
func WaitAll() error {
	return wait(func(string) bool { return true })
}

func wait(match func(string) bool) error {
	closing.mu.Lock()
	var list []*pendingClose
	for k, l := range closing.m {
		if match(k) {
			list = append(list, l...)
		}
	}
	closing.mu.Unlock()
	if len(list) == 0 {
		return nil
	}
	start := time.Now()
	for _, p := range list {
		<-p.done
	}
	totals.add(Stats{FinalWait: time.Since(start)})
	var errs []error
	closing.mu.Lock()
	for _, p := range list {
		if p.err != nil && !p.claimed {
			p.claimed = true
			errs = append(errs, p.err)
			removeLocked(p)
		}
	}
	closing.mu.Unlock()
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
