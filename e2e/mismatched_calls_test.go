//go:build cgo

package e2e

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// fileCall is one collective call on an open file.
type fileCall struct {
	name string
	do   func(f *collio.File) error
}

// collectiveCalls are the collective calls of the Go API, each with
// arguments that would succeed on every rank.
func collectiveCalls() []fileCall {
	data := make([]byte, 64)
	return []fileCall{
		{"write_at_all", func(f *collio.File) error { _, err := f.WriteAtAll(data, 0); return err }},
		{"read_at_all", func(f *collio.File) error { _, err := f.ReadAtAll(make([]byte, 64), 0); return err }},
		{"sync", func(f *collio.File) error { return f.Sync() }},
		{"close", func(f *collio.File) error { return f.Close() }},
		{"set_view", func(f *collio.File) error { return f.SetView(0, collio.Byte, collio.Byte, nil) }},
		{"set_size", func(f *collio.File) error { return f.SetSize(4096) }},
		{"preallocate", func(f *collio.File) error { return f.Preallocate(4096) }},
		{"set_atomicity", func(f *collio.File) error { return f.SetAtomicity(true) }},
		{"seek_shared", func(f *collio.File) error { _, err := f.SeekShared(0, io.SeekStart); return err }},
		{"write_ordered", func(f *collio.File) error { _, err := f.WriteOrdered(data); return err }},
		{"read_ordered", func(f *collio.File) error { _, err := f.ReadOrdered(make([]byte, 64)); return err }},
	}
}

// TestMismatchedCallPairs: for every pair of different collective calls,
// rank 0 makes one and the other ranks the other. Every rank returns
// ErrNotSame with the same text at once (no rank waits for the timeout),
// the file is unchanged, and the close that follows completes: on every
// rank when nobody was closing, and locally, with ErrBadFile, on the ranks
// that were not closing when some were (those closed the file already).
func TestMismatchedCallPairs(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		dir := mpirunner.TempDir(t, c)
		content := pattern(4096, 9, 9)
		calls := collectiveCalls()
		for i, a := range calls {
			for _, b := range calls[i+1:] {
				name := a.name + "-vs-" + b.name
				path := filepath.Join(dir, name)
				seed(t, c, path, content)
				f, err := collio.Open(c, path, collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "30"})
				together(t, c, err, "%s: open", name)
				if err != nil {
					continue
				}
				mine := b
				if c.Rank() == 0 {
					mine = a
				}
				start := time.Now()
				err = mine.do(f)
				if took := time.Since(start); took > 10*time.Second {
					t.Errorf("%s: rank %d's %s took %v: it waited for the others", name, c.Rank(), mine.name, took)
				}
				expectError(t, c, err, collio.ErrNotSame, name, true)
				closing := a.name == "close" || b.name == "close"
				if mine.name != "close" {
					err = f.Close()
					switch {
					case closing && !errors.Is(err, collio.ErrBadFile):
						t.Errorf("%s: close after a mismatch with a close: %v, want a local close (ErrBadFile)", name, err)
					case !closing && err != nil:
						t.Errorf("%s: close after the mismatch: %v", name, err)
					}
				}
				unchanged(t, c, path, content)
			}
		}
	})
}

// TestMismatchedSyncAndClose is the erroneous program of the issue that
// hung until it was killed: rank 0 syncs and then closes, the others close
// at once.
func TestMismatchedSyncAndClose(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		path := filepath.Join(mpirunner.TempDir(t, c), "sync-close")
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "5"})
		together(t, c, err, "open")
		if err != nil {
			return
		}
		var errs []error
		if c.Rank() == 0 {
			errs = append(errs, f.Sync())
		}
		errs = append(errs, f.Close())
		got := fmt.Sprint(errs)
		if c.Rank() == 0 && (len(errs) != 2 || !errors.Is(errs[0], collio.ErrNotSame) || !errors.Is(errs[1], collio.ErrBadFile)) {
			t.Errorf("rank 0: sync, close returned %s: want ErrNotSame, then a local close (ErrBadFile)", got)
		}
		if c.Rank() > 0 && !errors.Is(errs[0], collio.ErrNotSame) {
			t.Errorf("rank %d: close returned %s, want ErrNotSame", c.Rank(), got)
		}
		checkpoint(t, c)
	})
}

// TestCallNeverJoined: rank 0 syncs while the others make no call on the
// file until rank 0 has given up. Rank 0 returns a timeout error after
// collio_collective_timeout, and its close is local; the others' close
// then finds rank 0's abandoned sync and returns an error too. Nobody
// hangs.
func TestCallNeverJoined(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		path := filepath.Join(mpirunner.TempDir(t, c), "never-joined")
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "1"})
		together(t, c, err, "open")
		if err != nil {
			return
		}
		if c.Rank() == 0 {
			start := time.Now()
			err = f.Sync()
			if !errors.Is(err, collio.ErrTimeout) {
				t.Errorf("rank 0: sync alone returned %v, want a timeout", err)
			}
			if took := time.Since(start); took < time.Second || took > 20*time.Second {
				t.Errorf("rank 0: sync alone gave up after %v, want about 1s", took)
			}
		}
		together(t, c, c.Barrier(), "barrier")
		err = f.Close()
		switch {
		case c.Rank() == 0 && !errors.Is(err, collio.ErrBadFile):
			t.Errorf("rank 0: close after the timeout: %v, want a local close (ErrBadFile)", err)
		case c.Rank() > 0 && err == nil:
			t.Errorf("rank %d: close while rank 0 had given up succeeded", c.Rank())
		}
		checkpoint(t, c)
	})
}
