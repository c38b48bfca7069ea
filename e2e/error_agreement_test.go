//go:build cgo

package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// With collio_error_agreement=deferred (the default), a collective write
// in which every rank does its own I/O returns a failure on the failing
// rank at once and on every rank at the file's next synchronizing call,
// with the same class and text; the file stays usable after it.
func TestDeferredErrorUnderMPI(t *testing.T) {
	next := []struct {
		name string
		call func(f *collio.File, rec int) error
		// onlyIfSynchronizing: a collective transfer is a synchronizing
		// call only where its strategy is not fixed by the hints.
		onlyIfSynchronizing bool
	}{
		{"sync", func(f *collio.File, _ int) error { return f.Sync() }, false},
		{"set_view", func(f *collio.File, _ int) error { return f.SetView(0, collio.Byte, collio.Byte, nil) }, false},
		{"close", func(f *collio.File, _ int) error { return f.Close() }, false},
		{"write_at_all", func(f *collio.File, rec int) error {
			_, err := f.WriteAtAll(nil, 0)
			return err
		}, true},
	}
	strategies := []struct {
		name          string
		hints         collio.Hints
		synchronizing bool
	}{
		{"cb_disable", collio.Hints{"romio_cb_write": "disable"}, false},
		{"strategy_independent", collio.Hints{"collio_strategy": "independent"}, false},
		{"automatic", collio.Hints{"romio_ds_write": "disable"}, true}, // no interleaving: independent
	}
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		const rec = 512
		for _, st := range strategies {
			for _, nx := range next {
				if nx.onlyIfSynchronizing && !st.synchronizing {
					continue
				}
				name := st.name + "/" + nx.name
				path := "faulty:" + filepath.Join(dir, strings.ReplaceAll(name, "/", "-"))
				h := collio.Hints{"collio_fault": "eio_call=write:1", "collio_fault_ranks": strconv.Itoa(p - 1),
					"collio_collective_timeout": "15"}
				for k, v := range st.hints {
					h[k] = v
				}
				f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, h)
				together(t, c, err, "%s: open", name)
				if err != nil {
					continue
				}
				_, err = f.WriteAtAll(pattern(rec, r, 1), int64(r*rec))
				if r == p-1 {
					if err == nil || !strings.Contains(err.Error(), "I/O error") && !strings.Contains(err.Error(), "EIO") {
						t.Errorf("%s: the faulty rank's own call returned %v, want its EIO", name, err)
					}
				} else if err != nil {
					t.Errorf("%s: rank %d's call returned %v before any agreement", name, r, err)
				}
				msg := expectError(t, c, nx.call(f, rec), collio.ErrIO, name+": the next synchronizing call", true)
				want := fmt.Sprintf("an earlier collective call failed (call 1, write_at_all, on rank %d)", p-1)
				if r == 0 && !strings.Contains(msg, want) {
					t.Errorf("%s: error %q does not say %q", name, msg, want)
				}
				if nx.name == "close" {
					continue
				}
				// Reported once: the file works again.
				_, err = f.WriteAtAll(pattern(rec, r, 2), int64(r*rec))
				together(t, c, err, "%s: a write after the error", name)
				together(t, c, f.Close(), "%s: close", name)
			}
		}
	})
}

// With deferred agreement and collective buffering disabled, collective
// calls make no inter-rank communication, so ranks in different calls do
// not meet at once: the file's next synchronizing call reports it on
// every rank, and the file is usable again after that.
func TestDeferredMismatchAtSync(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		if p < 2 {
			t.Skip("needs 2 ranks")
		}
		path := filepath.Join(mpirunner.TempDir(t, c), "f")
		seed(t, c, path, pattern(64*p, 9, 9))
		f, err := collio.Open(c, path, collio.ModeRdWr,
			collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable", "collio_collective_timeout": "15"})
		together(t, c, err, "open")
		if err != nil {
			return
		}
		buf := pattern(64, r, 1)
		if r == 0 {
			_, err = f.ReadAtAll(make([]byte, 64), int64(64*r))
		} else {
			_, err = f.WriteAtAll(buf, int64(64*r))
		}
		together(t, c, err, "unsynchronized calls")
		msg := expectError(t, c, f.Sync(), collio.ErrNotSame, "sync after read_at_all against write_at_all", true)
		if r == 0 && !strings.Contains(msg, "different collective transfers") {
			t.Errorf("sync error %q does not name the mismatch", msg)
		}
		_, err = f.WriteAtAll(buf, int64(64*r))
		together(t, c, err, "write after the mismatch")
		together(t, c, f.Sync(), "sync after matching calls")
		together(t, c, f.Close(), "close")
	})
}

// The automatic choice learns a repeating pattern: after two agreed calls
// of one direction chose independent I/O, the following calls skip the
// entry Allgather, and a call posts its entry record in the background
// after 16 calls, then 32, 64, ... calls later (each evaluating the one
// posted two before). The data is checked, a mismatch made while skipping is
// reported at the next sync, and a new view starts the learning again.
func TestAutomaticRepeatsIndependent(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		path := filepath.Join(mpirunner.TempDir(t, c), "f")
		const piece = 8 << 10 // above the small-piece rule, so independent
		const calls = 40
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "15"})
		together(t, c, err, "open")
		if err != nil {
			return
		}
		// Agreed: the first two. Checks posted in the background: call 17
		// (then 49, beyond these 40 calls).
		agreed := func(i int) bool { return i == 0 || i == 1 }
		posted := func(i int) bool { return i == 17 }
		for i := range calls {
			_, err := f.WriteAtAll(pattern(piece, r, i), int64((i*p+r)*piece))
			together(t, c, err, "write %d", i)
			last, _ := f.Stats()
			repeated := strings.Contains(last.Reason, "repeated without inter-rank communication")
			background := strings.Contains(last.Reason, "checked in the background")
			if last.Strategy != "independent" || repeated == agreed(i) || background != posted(i) {
				t.Errorf("write %d: strategy %s, reason %q; want an agreed call: %v, a check posted: %v", i, last.Strategy, last.Reason, agreed(i), posted(i))
			}
		}
		for i := range calls {
			got := make([]byte, piece)
			_, err := f.ReadAtAll(got, int64((i*p+r)*piece))
			together(t, c, err, "read %d", i)
			if !bytes.Equal(got, pattern(piece, r, i)) {
				t.Errorf("read %d: data differs", i)
			}
			last, _ := f.Stats()
			repeated := strings.Contains(last.Reason, "repeated")
			background := strings.Contains(last.Reason, "checked in the background")
			if repeated == agreed(i) || background != posted(i) {
				t.Errorf("read %d: reason %q; want an agreed call: %v, a check posted: %v", i, last.Reason, agreed(i), posted(i))
			}
		}
		if p > 1 {
			// Writes are in their skipping phase (40 calls: the last
			// check was posted at call 17): a rank that reads instead is
			// caught at the sync.
			if r == 0 {
				_, err = f.ReadAtAll(make([]byte, piece), 0)
			} else {
				_, err = f.WriteAtAll(pattern(piece, r, 99), int64(r*piece))
			}
			together(t, c, err, "mismatched calls while skipping")
			expectError(t, c, f.Sync(), collio.ErrNotSame, "sync after the mismatch", true)
		}
		// A view of another shape (a filetype of another size) starts
		// the learning over.
		together(t, c, f.SetView(0, collio.Byte, collio.Bytes(piece), nil), "set_view")
		_, err = f.WriteAtAll(pattern(piece, r, 0), int64(r*piece))
		together(t, c, err, "write after set_view")
		if last, _ := f.Stats(); strings.Contains(last.Reason, "repeated") {
			t.Errorf("the first call after set_view repeated: %q", last.Reason)
		}
		together(t, c, f.Close(), "close")
	})
}

// While calls repeat a learned pattern, an error on one rank rides on the
// entry record its next background check posts, and the recheck point
// that evaluates it synchronizes and returns it on every rank, through
// MPI's nonblocking Allgather. The calls in between succeed elsewhere.
func TestBackgroundCheckCarriesErrorUnderMPI(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		if p < 2 {
			t.Skip("needs two ranks")
		}
		const piece, failAt = 8 << 10, 40
		// Checks are posted at calls 17, 49, 113, 241, ... (0-based); the
		// failure at call 40 rides on 49's, which the second point after
		// it, call 241, evaluates.
		const reported = 241
		path := "faulty:" + filepath.Join(mpirunner.TempDir(t, c), "f")
		h := collio.Hints{"collio_fault": fmt.Sprintf("eio_call=write:%d", failAt+1), "collio_fault_ranks": strconv.Itoa(p - 1),
			"collio_collective_timeout": "15"}
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, h)
		together(t, c, err, "open")
		if err != nil {
			return
		}
		for i := range reported {
			_, err := f.WriteAtAll(pattern(piece, r, i), int64((i*p+r)*piece))
			switch {
			case i == failAt && r == p-1:
				if err == nil {
					t.Errorf("write %d: the faulty rank's own call succeeded", i)
				}
			case err != nil:
				t.Errorf("write %d on rank %d: %v before the check that carries it", i, r, err)
			}
		}
		_, err = f.WriteAtAll(pattern(piece, r, reported), int64((reported*p+r)*piece))
		msg := expectError(t, c, err, collio.ErrIO, "the recheck point that evaluates the check", true)
		want := fmt.Sprintf("an earlier collective call failed (call %d, write_at_all, on rank %d)", failAt+1, p-1)
		if r == 0 && !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
		together(t, c, f.Close(), "close")
	})
}
