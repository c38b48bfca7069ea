package adio

import "testing"

// The learned choice repeats after independentStreak agreed calls, up to
// recheck points firstRecheck calls later, then twice as far each time.
func TestLearningRepeats(t *testing.T) {
	var l learning
	for range independentStreak {
		if l.repeatsLeft(true) != 0 {
			t.Fatalf("repeats before the streak: %+v", l)
		}
		l.learn(true, true)
	}
	if got := l.repeatsLeft(true); got != firstRecheck-1 {
		t.Fatalf("repeatsLeft = %d, want %d", got, firstRecheck-1)
	}
	if l.repeatsLeft(false) != 0 {
		t.Fatal("a direction learns from its own calls only")
	}
	l.skip(true, firstRecheck-1)
	if l.repeatsLeft(true) != 0 {
		t.Fatal("no repeat at the recheck point")
	}
	l.learn(true, true) // the recheck held
	if got := l.repeatsLeft(true); got != 2*firstRecheck-1 {
		t.Fatalf("after a recheck: repeatsLeft = %d, want %d", got, 2*firstRecheck-1)
	}
	l.learn(true, false)
	if l.holds(true) {
		t.Fatal("an agreed call that chose otherwise ends the streak")
	}
}

// A slot's learning counts for the file only when both learned since the
// same forget.
func TestLearningTakeLonger(t *testing.T) {
	var file, slot learning
	for range 3 {
		slot.learn(false, true)
	}
	slot.skip(false, 5)
	file.takeLonger(&slot)
	if file.streak[0] != 3 || file.skipped[0] != 5 {
		t.Fatalf("took %+v", file)
	}
	file.forget()
	file.takeLonger(&slot)
	if file.holds(false) {
		t.Fatal("took a slot's learning from before a forget")
	}
	file.checks[1] = []*backgroundCheck{{}} // in flight: the file's own
	if h := file.history(); h.pattern != file.pattern || h.checks[0] != nil || h.checks[1] != nil {
		t.Fatalf("history %+v", h)
	}
}
