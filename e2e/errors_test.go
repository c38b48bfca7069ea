//go:build cgo

package e2e

// Errors under MPI: a missing or existing file, bad or differing hints, a
// bad view, a write to a read-only file. Every rank returns an error of the
// same class (and, from collective calls, the same text), and files that
// must not change or appear do not.

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

func TestErrorsUnderMPI(t *testing.T) {
	content := pattern(300, 9, 9)

	mpiRun(t, "not-found", func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		path := filepath.Join(dir, "missing")
		for _, mode := range []collio.Mode{collio.ModeRdOnly, collio.ModeRdWr, collio.ModeWrOnly} {
			f, err := collio.Open(c, path, mode, nil)
			if f != nil {
				t.Errorf("mode %#x: got a file and %v", mode, err)
				f.Close()
			}
			expectError(t, c, err, collio.ErrNotFound, fmt.Sprintf("open mode %#x", mode), true)
		}
		_, err := collio.Open(c, filepath.Join(dir, "nodir", "f"), collio.ModeCreate|collio.ModeWrOnly, nil)
		expectError(t, c, err, collio.ErrNotFound, "create in a missing directory", true)
		// The host MPI-IO classes it alike.
		hf, err := mpi.HostOpen(c.(mpi.Comm), path, mpi.ModeRdOnly, nil)
		if err == nil {
			hf.Close()
		}
		expectError(t, c, err, collio.ErrNotFound, "host open", false)
		absent(t, c, path)
	})

	mpiRun(t, "exists", func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "existing")
		seed(t, c, path, content)
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeExcl|collio.ModeWrOnly, nil)
		if f != nil {
			f.Close()
		}
		expectError(t, c, err, collio.ErrExists, "exclusive create", true)
		unchanged(t, c, path, content)
	})

	mpiRun(t, "bad-hint", func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		fresh := filepath.Join(dir, "fresh")
		f, err := collio.Open(c, fresh, collio.ModeCreate|collio.ModeWrOnly, collio.Hints{"romio_cb_write": "sometimes"})
		if f != nil {
			f.Close()
		}
		msg := expectError(t, c, err, collio.ErrBadHint, "open with romio_cb_write=sometimes", true)
		for _, s := range []string{"romio_cb_write", "sometimes", "enable", "disable", "automatic"} {
			assert.Contains(t, msg, s)
		}
		absent(t, c, fresh)

		// Only the last rank passes a bad value: every rank must fail alike.
		path := filepath.Join(dir, "existing")
		seed(t, c, path, content)
		h := collio.Hints{"ind_wr_buffer_size": "4096"}
		if c.Rank() == c.Size()-1 {
			h = collio.Hints{"ind_wr_buffer_size": "-5"}
		}
		f, err = collio.Open(c, path, collio.ModeRdWr, h)
		if f != nil {
			f.Close()
		}
		msg = expectError(t, c, err, collio.ErrBadHint, "open with a bad hint on the last rank", true)
		assert.Contains(t, msg, "ind_wr_buffer_size")

		// A bad hint at set_view leaves the file and the view as they were.
		f, err = collio.Open(c, path, collio.ModeRdWr, nil)
		together(t, c, err, "open")
		ft, _ := collio.Contiguous(4, collio.Int32)
		err = f.SetView(8, collio.Int32, ft, collio.Hints{"romio_ds_write": "maybe"})
		expectError(t, c, err, collio.ErrBadHint, "set_view with romio_ds_write=maybe", true)
		if disp, et, _ := f.View(); disp != 0 || et.Size() != 1 {
			t.Errorf("view changed by a failed set_view: disp %d, etype size %d", disp, et.Size())
		}
		together(t, c, f.Close(), "close")
		unchanged(t, c, path, content)
	})

	mpiRun(t, "hint-not-same", func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		path := filepath.Join(mpirunner.TempDir(t, c), "f")
		last := c.Size() - 1
		h := collio.Hints{"cb_buffer_size": "1048576"}
		if c.Rank() == last {
			h = collio.Hints{"cb_buffer_size": "2097152"}
		}
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeWrOnly, h)
		if f != nil {
			f.Close()
		}
		msg := expectError(t, c, err, collio.ErrNotSame, "open with cb_buffer_size differing", true)
		for _, s := range []string{"cb_buffer_size", fmt.Sprintf("rank %d", last), "1048576", "2097152"} {
			assert.Contains(t, msg, s)
		}
		absent(t, c, path)
	})

	mpiRun(t, "filetype-not-etype-multiple", func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "f")
		seed(t, c, path, content)
		// Every rank but the last passes a valid view (16 bytes of ints
		// over 8-byte etypes); the last passes 12 bytes.
		n := 4
		if c.Rank() == c.Size()-1 {
			n = 3
		}
		ft, err := mpi.TypeContiguous(n, mpi.TypeInt())
		if err == nil {
			t.Cleanup(func() { ft.Free() })
		}
		together(t, c, err, "MPI_Type_contiguous")
		ftL, err := ft.Layout()
		together(t, c, err, "decoding")
		etL, err := mpi.TypeDouble().Layout()
		together(t, c, err, "decoding")
		f, err := collio.Open(c, path, collio.ModeRdWr, nil)
		together(t, c, err, "open")
		err = f.SetView(0, etL, ftL, nil)
		expectError(t, c, err, collio.ErrType, "set_view", true)
		if disp, et, _ := f.View(); disp != 0 || et.Size() != 1 {
			t.Errorf("view changed by a failed set_view: disp %d, etype size %d", disp, et.Size())
		}
		together(t, c, f.Close(), "close")
		unchanged(t, c, path, content)
	})

	mpiRun(t, "read-only", func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "f")
		seed(t, c, path, content)
		f, err := collio.Open(c, path, collio.ModeRdOnly, nil)
		together(t, c, err, "open")
		junk := pattern(40, c.Rank(), 1)
		_, err = f.WriteAt(junk, int64(40*c.Rank()))
		expectError(t, c, err, collio.ErrReadOnly, "write_at", false)
		_, err = f.Write(junk)
		expectError(t, c, err, collio.ErrReadOnly, "write", false)
		_, err = f.WriteAtAll(junk, int64(40*c.Rank()))
		expectError(t, c, err, collio.ErrReadOnly, "write_at_all", true)
		_, err = f.WriteAll(junk)
		expectError(t, c, err, collio.ErrReadOnly, "write_all", true)
		err = f.SetSize(10)
		expectError(t, c, err, collio.ErrReadOnly, "set_size", true)
		// Reading still works and sees the original content.
		got := make([]byte, len(content))
		n, err := f.ReadAtAll(got, 0)
		together(t, c, err, "read_at_all")
		assert.Equal(t, len(content), n, "bytes read")
		assert.True(t, bytes.Equal(got, content), "read back: %s", firstDiff(got, content))
		together(t, c, f.Close(), "close")
		unchanged(t, c, path, content)
	})
}
