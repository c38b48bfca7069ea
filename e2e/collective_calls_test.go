//go:build cgo

package e2e

// Collective calls with nothing to do, and the explicit-offset and
// file-pointer forms of one collective call mixed across ranks, for every
// strategy. (Calls that do not match: mismatched_calls_test.go.)

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// TestCollectiveNothingToDo: when every rank passes count 0, the
// collective calls of every strategy succeed, move nothing and leave an
// existing file as it was.
func TestCollectiveNothingToDo(t *testing.T) {
	content := pattern(500, 3, 3)
	cases := []struct {
		name     string
		hints    collio.Hints
		strategy string
	}{
		{"twophase", cbHints("cb_nodes", "2", "cb_buffer_size", "64"), stratTwoPhase},
		{"twophase-noindep", collio.Hints{"romio_no_indep_rw": "true"}, stratTwoPhase},
		{"independent", collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable"}, stratIndependent},
		{"automatic", nil, ""},
	}
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		ft, err := collio.Vector(4, 2, 3*c.Size(), collio.Int32)
		together(t, c, err, "building the view")
		for _, tc := range cases {
			path := filepath.Join(dir, tc.name)
			seed(t, c, path, content)
			f, err := collio.Open(c, path, collio.ModeRdWr, tc.hints)
			together(t, c, err, "%s: open", tc.name)
			err = f.SetView(int64(8*c.Rank()), collio.Int32, ft, nil)
			if err != nil {
				f.Close()
			}
			together(t, c, err, "%s: set_view", tc.name)
			var errs []error
			check := func(op string, n int, err error) {
				if err == nil && n != 0 {
					err = fmt.Errorf("moved %d bytes", n)
				}
				if err == nil {
					last, _ := f.Stats()
					err = checkStrategy(last, tc.strategy)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %s: %w", tc.name, op, err))
				}
			}
			n, err := f.WriteAtAll(nil, 5)
			check("write_at_all", n, err)
			n, err = f.WriteAtAll([]byte{}, 0)
			check("write_at_all (empty slice)", n, err)
			n, err = f.WriteAll(nil)
			check("write_all", n, err)
			n, err = f.ReadAtAll(nil, 2)
			check("read_at_all", n, err)
			n, err = f.ReadAll(nil)
			check("read_all", n, err)
			if pos := f.Position(); pos != 0 {
				errs = append(errs, fmt.Errorf("%s: file pointer at %d after empty calls", tc.name, pos))
			}
			for _, err := range errs {
				t.Error(err)
			}
			together(t, c, f.Close(), "%s: close", tc.name)
			unchanged(t, c, path, content)
		}
	})
}

// TestMixedCollectiveForms: the explicit-offset and file-pointer forms of
// one direction are one collective call, as in ROMIO and OMPIO. PnetCDF
// flushes with write_at_all on ranks that have data and write_all with
// count 0 on the others; the file must be what write_at_all everywhere
// writes, and each rank's file pointer moves by its own call only.
func TestMixedCollectiveForms(t *testing.T) {
	cases := []struct {
		name  string
		hints collio.Hints
	}{
		{"auto", nil},
		{"twophase", cbHints("cb_buffer_size", "64")},
		{"dynamic", collio.Hints{"collio_strategy": "dynamic", "cb_buffer_size": "64"}},
		{"tam", collio.Hints{"collio_strategy": "tam", "collio_node_size": "2"}},
		{"independent", collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable"}},
	}
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		const rec = 24 // bytes per rank per call
		for _, tc := range cases {
			path := filepath.Join(dir, tc.name)
			h := collio.Hints{"collio_collective_timeout": "15"}
			for k, v := range tc.hints {
				h[k] = v
			}
			f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, h)
			together(t, c, err, "%s: open", tc.name)
			if err != nil {
				continue
			}
			// Even ranks write at an offset, odd ranks at the file
			// pointer (which starts at 0, so their records go where
			// write_at_all would put them only if they seek first).
			data := pattern(rec, r, 3)
			var n int
			if r%2 == 0 {
				n, err = f.WriteAtAll(data, int64(r*rec))
			} else {
				if _, err = f.Seek(int64(r*rec), io.SeekStart); err == nil {
					n, err = f.WriteAll(data)
				}
			}
			together(t, c, err, "%s: mixed write_at_all / write_all", tc.name)
			if err == nil && n != rec {
				t.Errorf("%s: wrote %d bytes, want %d", tc.name, n, rec)
			}
			// PnetCDF's form: ranks with nothing call write_all with
			// count 0 while rank 0 writes a trailer at an offset.
			trailer := pattern(rec, p, 3)
			if r == 0 {
				_, err = f.WriteAtAll(trailer, int64(p*rec))
			} else {
				_, err = f.WriteAll(nil)
			}
			together(t, c, err, "%s: write_at_all with empty write_all", tc.name)
			want := int64((r + 1) * rec)
			if r%2 == 0 {
				want = 0
			}
			if pos := f.Position(); pos != want {
				t.Errorf("%s: file pointer at %d, want %d", tc.name, pos, want)
			}
			// Reads mix the same way.
			got := make([]byte, rec)
			if r%2 == 1 {
				n, err = f.ReadAtAll(got, int64(r*rec))
			} else {
				if _, err = f.Seek(int64(r*rec), io.SeekStart); err == nil {
					n, err = f.ReadAll(got)
				}
			}
			together(t, c, err, "%s: mixed read_at_all / read_all", tc.name)
			if err == nil && !bytes.Equal(got[:n], data) {
				t.Errorf("%s: read back: %s", tc.name, firstDiff(got[:n], data))
			}
			together(t, c, f.Close(), "%s: close", tc.name)
			all := make([]byte, rec*p)
			together(t, c, c.Allgather(data, all), "gathering the data")
			unchanged(t, c, path, append(all, trailer...))
		}
	})
}
