package adio

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// collectives is how many collective calls world rank r made so far.
func collectives(k *comm.Counters, r int) int64 {
	var n int64
	for _, pc := range k.SnapshotRank(r) {
		n += pc.Collectives
	}
	return n
}

// set_view synchronizes once (PnetCDF and HDF5 call it twice per
// collective write), and once more only when some rank moved the shared
// file pointer, which it then resets.
func TestSetViewSynchronizesOnce(t *testing.T) {
	path := tempPath(t, "v")
	k := comm.NewCounters()
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := Open(comm.Counting(c, k), path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		ft, err := layout.Resized(layout.Bytes(8), 0, 32)
		if err != nil {
			return err
		}
		view := View{Disp: int64(8 * r), Etype: layout.Byte, Filetype: ft}
		setView := func(want int64) error {
			before := collectives(k, r)
			if err := f.SetView(view, nil); err != nil {
				return err
			}
			if got := collectives(k, r) - before; got != want {
				return fmt.Errorf("rank %d: set_view made %d collective calls, want %d", r, got, want)
			}
			return nil
		}
		if err := setView(1); err != nil {
			return err
		}
		if r == 1 { // one rank moves the pointer: every rank resets
			if _, _, err := f.WriteShared(Bytes(rankData(r, 8))); err != nil {
				return err
			}
		}
		if err := setView(2); err != nil {
			return err
		}
		if pos, err := f.PositionShared(); err != nil || pos != 0 {
			return fmt.Errorf("rank %d: shared pointer %d after set_view (%v), want 0", r, pos, err)
		}
		return setView(1)
	})
}

// Ranks that pass different hints to set_view, or etypes of different
// sizes, get the same error everywhere, and no rank hangs.
func TestSetViewDifferentArguments(t *testing.T) {
	path := tempPath(t, "d")
	for _, tc := range []struct {
		name  string
		view  func(r int) (View, map[string]string)
		class error
	}{
		{"hints on one rank", func(r int) (View, map[string]string) {
			if r == 2 {
				return View{Etype: layout.Byte, Filetype: layout.Byte}, map[string]string{"cb_buffer_size": "1048576"}
			}
			return View{Etype: layout.Byte, Filetype: layout.Byte}, nil
		}, ioerr.ErrNotSame},
		{"etype sizes", func(r int) (View, map[string]string) {
			if r == 1 {
				return View{Etype: layout.Int32, Filetype: layout.Int32}, nil
			}
			return View{Etype: layout.Byte, Filetype: layout.Byte}, nil
		}, ioerr.ErrNotSame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := sameOnAll(t, 4, func(c comm.Comm) error {
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
				if err != nil {
					return err
				}
				defer f.Close()
				return f.SetView(tc.view(c.Rank()))
			})
			require.ErrorIs(t, errs[0], tc.class)
		})
	}
}

// argError is an error of a caller's own argument checks that formats its
// context itself, as the C library's MPI-class errors do.
type argError struct{ op, path, msg string }

func (e *argError) Error() string { return "collio: " + e.op + " " + e.path + ": " + e.msg }
func (e *argError) WithContext(op, path string, rank int) error {
	c := *e
	if c.op == "" {
		c.op, c.path = op, path
	}
	return &c
}

// A caller's own argument error (SetViewChecked, the C library's checks)
// fails set_view on every rank within its one collective step: ranks 1
// and 2 fail, each returns its own error, and rank 0 the lowest failing
// rank's text, the call named once.
func TestSetViewCheckedAgreesLocalErrorOnce(t *testing.T) {
	requireAgreesLocalErrorOnce(t, "set_view", func(r int) string { return fmt.Sprintf("invalid displacement -%d", r) },
		func(f *File, local error) error { return f.SetViewChecked(local, false, DefaultView(), nil) }, 1)
}

// requireAgreesLocalErrorOnce runs call on 3 ranks, ranks 1 and 2 with an
// argument error of their own (bad(r)): it must make 2 collective calls
// (the agreement, then rank 1's error text) and fail on every rank, ranks
// 1 and 2 with their own error, rank 0 with rank 1's text, op named once;
// then, without errors, succeed in okCalls collective calls (the file
// stays usable).
func requireAgreesLocalErrorOnce(t *testing.T, op string, bad func(r int) string, call func(f *File, local error) error, okCalls int64) {
	path := tempPath(t, "c")
	k := comm.NewCounters()
	world(t, 3, func(c comm.Comm) error {
		r := c.Rank()
		f, err := Open(comm.Counting(c, k), path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		var local error
		if r > 0 {
			local = &argError{msg: bad(r)}
		}
		before := collectives(k, r)
		err = call(f, local)
		if got := collectives(k, r) - before; got != 2 {
			return fmt.Errorf("rank %d: %s made %d collective calls, want 2 (the agreement, then rank 1's error text)", r, op, got)
		}
		if err == nil {
			return fmt.Errorf("rank %d: %s succeeded while rank 1's arguments were wrong", r, op)
		}
		var own *argError
		if r > 0 && !errors.As(err, &own) {
			return fmt.Errorf("rank %d returned %v, not its own error", r, err)
		}
		want := fmt.Sprintf("collio: %s %s: %s", op, path, bad(max(r, 1))) // rank 0 gets rank 1's
		if !strings.Contains(err.Error(), want) || strings.Count(err.Error(), op) != 1 {
			return fmt.Errorf("rank %d: %q, want it to contain %q once", r, err, want)
		}
		before = collectives(k, r)
		if err := call(f, nil); err != nil {
			return err
		}
		if got := collectives(k, r) - before; got != okCalls {
			return fmt.Errorf("rank %d: %s made %d collective calls, want %d", r, op, got, okCalls)
		}
		return nil
	})
}
