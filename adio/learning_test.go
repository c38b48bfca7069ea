package adio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

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

// PnetCDF's pattern: each variable's write sets the variable's view
// before and the whole file's after it. A learned pattern survives views
// of the same shape (the same filetypes moved to the next variable), so
// the later variables' writes repeat without agreement; a view of another
// shape, or hints given with set_view, start the learning over. The data
// is checked.
func TestLearningSurvivesViewsOfTheSameShape(t *testing.T) {
	dir := t.TempDir()
	const piece, vars = 8 << 10, 6 // above the small-piece rule: independent
	world(t, 3, func(c comm.Comm) error {
		p, r := c.Size(), c.Rank()
		f, err := Open(c, filepath.Join(dir, "f"), ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		// Variable v: p pieces, one per rank, at v*p*piece.
		ft := must(layout.Resized(layout.Bytes(piece), 0, int64(p*piece)))
		write := func(v int, filetype *layout.Type, hints map[string]string) (repeated bool, err error) {
			if err := f.SetView(View{Disp: int64((v*p + r) * piece), Etype: layout.Byte, Filetype: filetype}, hints); err != nil {
				return false, err
			}
			if _, err := f.WriteAtAll(Bytes(rankData(r+p*v, piece)), 0); err != nil {
				return false, err
			}
			last, _ := f.Stats()
			return last.Reason == repeatReason, f.SetView(DefaultView(), nil)
		}
		// vars variables of the same shape, then one with hints; again,
		// then one of another shape.
		other := must(layout.Resized(layout.Bytes(2*piece), 0, int64(2*p*piece))) // larger blocks
		for round, last := range []struct {
			what     string
			filetype *layout.Type
			hints    map[string]string
		}{
			{"hints with set_view", ft, map[string]string{"cb_buffer_size": "8m"}},
			{"a view of another shape", other, nil},
		} {
			for i := range vars {
				repeated, err := write(round*(vars+1)+i, ft, nil)
				if err != nil {
					return err
				}
				// Two agreed calls first; in round 1 the write with
				// hints was one of them.
				if want := i >= 2-round; repeated != want {
					return fmt.Errorf("round %d, variable %d: repeated without agreement %v, want %v", round, i, repeated, want)
				}
			}
			if repeated, err := write(round*(vars+1)+vars, last.filetype, last.hints); err != nil {
				return err
			} else if repeated {
				return fmt.Errorf("%s: the write after it repeated without agreement", last.what)
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, "f"))
		if err != nil {
			return err
		}
		for v := range 2 * (vars + 1) {
			at := (v*p + r) * piece
			if !bytes.Equal(b[at:at+piece], rankData(r+p*v, piece)) {
				return fmt.Errorf("variable %d's data differs", v)
			}
		}
		return nil
	})
}
