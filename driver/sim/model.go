package sim

import (
	"time"
)

// The cost model. A request of n bytes at offset o is split by stripe;
// stripe s lives on target (s + start) % count. For each target the
// request touches, with n_t of its bytes on that target:
//
//   - Locks. A write needs each touched stripe's lock exclusively: if
//     another writer holds it, or readers other than this writer share
//     it, the lock is revoked and moved, which costs lockLatency per
//     stripe. A read shares the lock: it revokes only another writer's
//     exclusive lock (lockLatency), never other readers. A writer reading
//     under its own exclusive lock keeps it. Locks stay with their holder
//     after the request, as Lustre clients cache extent locks.
//   - Service. The target serves requests one after another: the piece
//     starts when the target is free (its busy-until time, or now), and
//     takes latency + (lock revocations × lockLatency) + n_t / bandwidth.
//     Waiting for the target also means waiting for the holder of a lock
//     to finish its I/O on that stripe before the lock can move, since a
//     stripe always lives on the same target.
//
// The pieces on different targets proceed in parallel; the request
// completes when its last piece does, and the caller sleeps until then.
// Booking happens when the request is issued (a reservation in the
// shared timeline), so several writers queue correctly without any of
// them sleeping while holding the state lock.

// model applies the cost model of one file's params to a shared state.
type model struct {
	p params
}

// writerMany marks a stripe read-shared by more than one reader.
const writerMany = -1

// acc accumulates one target's part of a request.
type acc struct {
	target    int
	bytes     int64
	conflicts int64
}

// book reserves the request [off, off+n) by writer at time now on s,
// which the caller has locked, and returns when it completes. It also
// returns the number of lock revocations, for tests and statistics.
func (m model) book(s *state, now, writer, off, n int64, write bool) (end int64, revocations int64) {
	if n <= 0 {
		return now, 0
	}
	// A clock reading below the last one recorded means the machine
	// rebooted (the monotonic clock restarted) since the state was used:
	// busy times from then are meaningless.
	if last := s.load(wLastNow); now < last {
		for t := 0; t < s.targets(); t++ {
			s.store(s.busyIndex(t), 0)
		}
	}
	s.store(wLastNow, now)

	size, count := m.p.stripeSize, int64(m.p.stripeCount)
	first, last := off/size, (off+n-1)/size
	k := min(last-first+1, count)
	parts := make([]acc, k)
	for i := range parts {
		parts[i].target = int((first + int64(i) + int64(m.p.startTarget)) % count)
	}
	for st := first; st <= last; st++ {
		lo, hi := max(off, st*size), min(off+n, (st+1)*size)
		a := &parts[(st-first)%k]
		a.bytes += hi - lo
		if m.takeLock(s, st, writer, write) {
			a.conflicts++
		}
	}
	end = now
	for _, a := range parts {
		bi := s.busyIndex(a.target)
		start := max(now, s.load(bi))
		done := start + int64(m.p.latency) + a.conflicts*int64(m.p.lockLatency) + m.transfer(a.bytes)
		s.store(bi, done)
		end = max(end, done)
		revocations += a.conflicts
	}
	return end, revocations
}

// transfer is the time to move n bytes at one target's bandwidth.
func (m model) transfer(n int64) int64 {
	if m.p.bandwidth <= 0 {
		return 0
	}
	return int64(float64(n) * float64(time.Second) / float64(m.p.bandwidth))
}

// takeLock gives writer the lock on stripe (exclusive for a write,
// shared for a read) and reports whether another holder had to be
// revoked.
func (m model) takeLock(s *state, stripe, writer int64, write bool) bool {
	i := s.slotIndex(stripe)
	tagI, ownerI, readerI := i, i+1, i+2
	if s.load(tagI) != stripe+1 {
		// Never locked, or the slot's lock was for another stripe: evict.
		s.store(tagI, stripe+1)
		s.store(ownerI, 0)
		s.store(readerI, 0)
	}
	owner, reader := s.load(ownerI), s.load(readerI)
	if owner == writer {
		return false // an exclusive holder may read and write
	}
	if write {
		s.store(ownerI, writer)
		s.store(readerI, 0)
		return owner != 0 || (reader != 0 && reader != writer)
	}
	if owner != 0 {
		s.store(ownerI, 0)
		s.store(readerI, writer)
		return true
	}
	switch reader {
	case 0, writer:
		s.store(readerI, writer)
	default:
		s.store(readerI, writerMany)
	}
	return false
}
