package adio

import "fmt"

// How the automatic choice learns a repeating pattern: after
// independentStreak agreed calls in a row (of one direction) ran
// independent I/O with no agreement, the next calls of that direction do
// so without the entry Allgather, and recheck points test whether the
// ranks' pattern still holds: after firstRecheck calls, then after twice
// as many each time the pattern held, up to lastRecheck. A recheck runs in
// the background (recheck.go): a synchronous one made the ranks that had
// run ahead wait for the others.
const (
	independentStreak = 2
	firstRecheck      = 16
	lastRecheck       = 1024
)

// learning is what the automatic choice learned of a file's collective
// calls, per direction (read, write), and the checks in flight that the
// pattern still holds. Every rank keeps the same, since it changes only
// on what every rank knows alike: the agreed choices, the count of calls,
// and the collective calls that forget.
type learning struct {
	// streak counts the agreed calls in a row whose automatic choice was
	// independent I/O with no agreement; skipped the calls since that went
	// the same way without agreeing (repeatsIndependent).
	streak, skipped [2]int
	// checks are the entry records of the rechecks posted without waiting
	// (recheckInBackground), oldest first, at most checksInFlight.
	checks [2][]*backgroundCheck
	// pattern counts the forget calls: a check, or a nonblocking
	// operation's slot, learned from calls since the same one only.
	pattern uint64
	// view is the shape of the views the pattern was learned under
	// (File.viewShape).
	view uint64
}

// learn records whether the automatic choice of an agreed call was
// independent I/O with no agreement. A recheck whose pattern held counts
// as such a call: the next recheck point comes twice as far.
func (l *learning) learn(write, independent bool) {
	d := direction(write)
	l.skipped[d] = 0
	if independent {
		l.streak[d]++
	} else {
		l.streak[d] = 0
	}
}

// holds reports whether enough agreed calls chose independent I/O for the
// calls of this direction to repeat that choice (up to recheck points).
func (l *learning) holds(write bool) bool { return l.streak[direction(write)] >= independentStreak }

// skip counts n calls of this direction that repeated the choice.
func (l *learning) skip(write bool, n int) { l.skipped[direction(write)] += n }

// repeatsLeft is how many calls of this direction from here on repeat
// the learned choice before the next recheck point (0: this call does not).
func (l *learning) repeatsLeft(write bool) int {
	if !l.holds(write) {
		return 0
	}
	d := direction(write)
	return max(recheckAfter(l.streak[d])-1-l.skipped[d], 0)
}

// recheckAfter is how many calls repeat the choice before the next agreed
// call, for a streak of agreed independent calls.
func recheckAfter(streak int) int {
	n := firstRecheck
	for s := independentStreak; s < streak && n < lastRecheck; s++ {
		n *= 2
	}
	return min(n, lastRecheck)
}

// forget restarts the learning: new hints or atomic mode may change the
// choice.
func (l *learning) forget() {
	l.streak, l.skipped = [2]int{}, [2]int{}
	l.pattern++
}

// under restarts the learning when a call runs under views of another
// shape than the pattern was learned under. Only then: PnetCDF sets a
// variable's view before each write and the whole file's after it, and
// the next variable of the same shape repeats the pattern.
func (l *learning) under(view uint64) {
	if l.view != view {
		l.forget()
		l.view = view
	}
}

// history is the learning without the checks in flight: what a
// nonblocking operation's slot hands from one operation to the next.
func (l *learning) history() learning {
	return learning{streak: l.streak, skipped: l.skipped, pattern: l.pattern, view: l.view}
}

// takeLonger takes, per direction, o's streak and skipped calls where
// o's streak is longer; o counts only if it learned since the same
// forget as l, under views of the same shape.
func (l *learning) takeLonger(o *learning) {
	if o.pattern != l.pattern || o.view != l.view {
		return
	}
	for d := range l.streak {
		if o.streak[d] > l.streak[d] {
			l.streak[d], l.skipped[d] = o.streak[d], o.skipped[d]
		}
	}
}

// repeatsIndependent reports whether this call goes the way the last
// agreed calls of its direction went: independent I/O with no inter-rank
// communication, as with romio_cb_write=disable. The choice is made from
// what every rank knows alike (the agreed history and the count of calls
// since), never from this rank's arguments, so all ranks skip the
// Allgather together. Independent I/O is correct for any pattern
// (unsynchronized takes locks where some rank could read-modify-write);
// a pattern that changed, and that two-phase would serve better, is seen
// at the (maxChecksInFlight+1)th recheck point after the change
// (recheckInBackground), at most (maxChecksInFlight+1)*lastRecheck-1
// calls later.
func (f *File) repeatsIndependent(write bool) (string, bool) {
	if f.learned.repeatsLeft(write) <= 0 {
		return "", false
	}
	f.learned.skip(write, 1)
	return repeatReason, true
}

// repeatReason is the reason COLLIO_STATS and Stats show for those calls;
// one text, so a report groups them.
var repeatReason = fmt.Sprintf("the agreed calls before chose independent I/O: repeated without inter-rank communication (the ranks' records are compared at recheck points %d calls later, then %d, %d, ... up to %d calls apart)", firstRecheck, firstRecheck, 2*firstRecheck, lastRecheck)
