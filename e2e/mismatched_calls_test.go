//go:build cgo

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
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
// then finds rank 0's abandoned sync, or waits for it in vain, and
// returns an error too. Nobody hangs. On one node and with a node per
// rank (agreements gathered point-to-point, as on a cluster).
func TestCallNeverJoined(t *testing.T) {
	for _, nodeSize := range []string{"0", "1"} {
		t.Run("node_size="+nodeSize, func(t *testing.T) { callNeverJoined(t, nodeSize) })
	}
}

func callNeverJoined(t *testing.T, nodeSize string) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		path := filepath.Join(mpirunner.TempDir(t, c), "never-joined")
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "1", "collio_node_size": nodeSize})
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

// TestMismatchedCollectives: ranks in different collective calls on the
// same file all get ErrNotSame with the same text, nothing is written, no
// rank hangs, and the file stays usable for matching calls.
func TestMismatchedCollectives(t *testing.T) {
	content := pattern(4096, 5, 5)
	cases := []struct {
		name  string
		hints collio.Hints
	}{
		{"twophase", cbHints("cb_buffer_size", "64")},
		{"twophase-noindep", collio.Hints{"romio_no_indep_rw": "true", "cb_config_list": "*:*"}},
		// A node per rank: the agreements gather point-to-point, as on a cluster.
		{"twophase-nodes", cbHints("cb_buffer_size", "64", "collio_node_size", "1")},
		// Deferred agreement makes these calls unsynchronized: see
		// TestDeferredMismatchAtSync.
		{"independent", collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable", "collio_error_agreement": "immediate"}},
	}
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		if p < 2 {
			t.Skip("needs 2 ranks")
		}
		dir := mpirunner.TempDir(t, c)
		// 8-byte records round-robin: the accesses interleave.
		ct, err := collio.Contiguous(8, collio.Byte)
		var ft *collio.Type
		if err == nil {
			ft, err = collio.Resized(ct, 0, int64(8*p))
		}
		together(t, c, err, "building the view")
		data := pattern(256, r, 7)
		for _, tc := range cases {
			path := filepath.Join(dir, tc.name)
			seed(t, c, path, content)
			h := collio.Hints{"collio_collective_timeout": "15"}
			for k, v := range tc.hints {
				h[k] = v
			}
			f, err := collio.Open(c, path, collio.ModeRdWr, h)
			together(t, c, err, "%s: open", tc.name)
			err = f.SetView(int64(8*r), collio.Byte, ft, nil)
			if err != nil {
				f.Close()
			}
			together(t, c, err, "%s: set_view", tc.name)

			// Rank 0 reads while the others write.
			if r == 0 {
				_, err = f.ReadAtAll(make([]byte, len(data)), 0)
			} else {
				_, err = f.WriteAtAll(data, 0)
			}
			msg := expectError(t, c, err, collio.ErrNotSame, tc.name+": read_at_all against write_at_all", true)
			if r == 0 && msg != "" {
				t.Logf("%s: %s", tc.name, msg)
			}
			// The last rank reads at its file pointer while the others
			// write at an offset: the forms may mix, the directions not.
			if r == p-1 {
				_, err = f.ReadAll(make([]byte, len(data)))
			} else {
				_, err = f.WriteAtAll(data, 0)
			}
			expectError(t, c, err, collio.ErrNotSame, tc.name+": read_all against write_at_all", true)
			if pos := f.Position(); pos != 0 {
				t.Errorf("%s: file pointer moved to %d by a failed call", tc.name, pos)
			}
			together(t, c, c.Barrier(), "barrier")
			unchanged(t, c, path, content)

			// Matching calls still work: a read sees the original
			// content, a write lands.
			got := make([]byte, len(data))
			n, err := f.ReadAtAll(got, 0)
			if err == nil && n != len(got) {
				err = fmt.Errorf("read %d bytes, want %d", n, len(got))
			}
			together(t, c, err, "%s: read_at_all after the mismatches", tc.name)
			want := make([]byte, 0, len(data))
			for k := 0; k < len(data); k += 8 {
				at := k*p + 8*r
				want = append(want, content[at:at+8]...)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: read after the mismatches: %s", tc.name, firstDiff(got, want))
			}
			_, err = f.WriteAtAll(data, 0)
			together(t, c, err, "%s: write_at_all after the mismatches", tc.name)
			together(t, c, f.Close(), "%s: close", tc.name)
			after := slices.Clone(content)
			all := make([]byte, len(data)*p)
			together(t, c, c.Allgather(data, all), "gathering the data")
			for q := 0; q < p; q++ {
				for k := 0; k < len(data); k += 8 {
					copy(after[k*p+8*q:], all[q*len(data)+k:q*len(data)+k+8])
				}
			}
			unchanged(t, c, path, after)
		}
	})
}
