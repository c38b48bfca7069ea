package adio

import (
	"fmt"
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
