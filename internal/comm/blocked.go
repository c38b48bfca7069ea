package comm

import (
	"fmt"
	"slices"
	"sync"
)

// callInfo describes a blocking call, for the report RunWorldTimeout gives
// about ranks that are stuck. It is formatted only when reported.
type callInfo struct {
	name string // "Barrier", "Wait(Irecv)", ...
	comm uint64 // group id
	seq  uint64 // collective sequence number on that communicator
	peer int    // point-to-point partner (AnySource allowed)
	tag  int
	p2p  bool
}

func (c *callInfo) String() string {
	if c.p2p {
		peer := fmt.Sprint(c.peer)
		if c.peer == AnySource {
			peer = "any"
		}
		return fmt.Sprintf("%s peer %s tag %d on comm %d", c.name, peer, c.tag, c.comm)
	}
	return fmt.Sprintf("%s #%d on comm %d", c.name, c.seq, c.comm)
}

// rankCalls records what one world rank is doing. Several goroutines of a
// rank may block at once (point-to-point calls), hence a list.
type rankCalls struct {
	mu      sync.Mutex
	active  []*callInfo
	running bool // inside RunWorld's fn
}

func (rc *rankCalls) enter(ci *callInfo) {
	rc.mu.Lock()
	rc.active = append(rc.active, ci)
	rc.mu.Unlock()
}

func (rc *rankCalls) leave(ci *callInfo) {
	rc.mu.Lock()
	if i := slices.Index(rc.active, ci); i >= 0 {
		rc.active = slices.Delete(rc.active, i, i+1)
	}
	rc.mu.Unlock()
}

func (rc *rankCalls) setRunning(on bool) {
	rc.mu.Lock()
	rc.running = on
	rc.mu.Unlock()
}

// describe is "" for a rank that is neither running nor blocked.
func (rc *rankCalls) describe() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.active) == 0 {
		if rc.running {
			return "running outside comm calls"
		}
		return ""
	}
	s := ""
	for i, ci := range rc.active {
		if i > 0 {
			s += " and "
		}
		s += ci.String()
	}
	return s
}

// wait blocks world rank rank until ch is closed or the world is aborted,
// recording ci as what the rank is blocked in meanwhile.
func (w *World) wait(rank int, ci callInfo, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	default:
		return w.waitSlow(rank, ci, ch)
	}
}

// waitSlow is wait's blocking path, apart so that the fast path does not
// allocate the recorded callInfo.
func (w *World) waitSlow(rank int, ci callInfo, ch <-chan struct{}) error {
	rc := &w.calls[rank]
	rc.enter(&ci)
	defer rc.leave(&ci)
	select {
	case <-ch:
		return nil
	case <-w.abortCh:
		select {
		case <-ch: // both ready: the call did finish
			return nil
		default:
			return w.abortErr
		}
	}
}

// blockedReport lists the ranks that have not finished, grouped by what
// they are doing, e.g. "Barrier #3 on comm 0: ranks 0-5, 7; running outside
// comm calls: rank 6".
func (w *World) blockedReport() string {
	var order []string
	byWhat := map[string][]int{}
	for r := range w.calls {
		d := w.calls[r].describe()
		if d == "" {
			continue
		}
		if _, seen := byWhat[d]; !seen {
			order = append(order, d)
		}
		byWhat[d] = append(byWhat[d], r)
	}
	if len(order) == 0 {
		return "no rank is blocked"
	}
	s := ""
	for i, d := range order {
		if i > 0 {
			s += "; "
		}
		s += d + ": " + rankList(byWhat[d])
	}
	return s
}

// rankList formats ascending ranks compactly: "rank 3", "ranks 0-5, 7".
func rankList(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	s := "ranks "
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if i > 0 {
			s += ", "
		}
		if j > i {
			s += fmt.Sprintf("%d-%d", ranks[i], ranks[j])
		} else {
			s += fmt.Sprint(ranks[i])
		}
		i = j + 1
	}
	return s
}
