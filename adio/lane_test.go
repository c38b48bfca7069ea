package adio

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// laneWrite serves one write as libcollio's C lane does: one pwrite at
// the Lane's offset.
func laneWrite(l Lane, p []byte, off int64) error {
	n, err := unix.Pwrite(l.FD, p, l.Base+off*l.EtypeSize)
	if err == nil && n != len(p) {
		err = fmt.Errorf("short write %d of %d", n, len(p))
	}
	return err
}

// Rank 1 serves its calls through the Lane whenever it may, the other
// ranks make every call here; the ranks stay in step (the next recheck
// point and the agreed calls after match), and the file is right.
func TestLaneServesRepeatedCalls(t *testing.T) {
	const piece, calls = 8 << 10, 100
	for _, h := range []map[string]string{nil, {"romio_cb_write": "disable"}} {
		path := tempPath(t, "f")
		var served [4]int64
		world(t, 4, func(c comm.Comm) error {
			p, r := c.Size(), c.Rank()
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			var lane Lane
			var ok bool
			var got LaneCalls
			for i := range calls {
				data, off := rankData(r+i*p, piece), int64((i*p+r)*piece)
				if ok && r == 1 && lane.Calls != 0 {
					if err := laneWrite(lane, data, off); err != nil {
						return err
					}
					lane.Calls--
					got.Calls++
					got.Bytes += piece
					got.LastBytes, got.LastTime = piece, time.Microsecond
					continue
				}
				f.AddLaneCalls(true, got)
				served[r] += got.Calls
				got = LaneCalls{}
				if _, err := f.WriteAtAll(Bytes(data), off); err != nil {
					return fmt.Errorf("write %d: %w", i, err)
				}
				lane, ok = f.Lane(true)
			}
			f.AddLaneCalls(true, got)
			served[r] += got.Calls
			if _, total := f.Stats(); total.Bytes != calls*piece {
				return fmt.Errorf("rank %d: %d bytes counted, want %d", r, total.Bytes, calls*piece)
			}
			if err := f.Sync(); err != nil { // agreed: sequence numbers and digests must match
				return err
			}
			return f.Close()
		})
		require.Greater(t, served[1], int64(calls/2), "hints %v: the lane served %d of rank 1's calls", h, served[1])
		want := make([]byte, 0, calls*4*piece)
		for i := range calls * 4 {
			want = append(want, rankData(i, piece)...)
		}
		require.True(t, bytes.Equal(want, readFile(t, path)), "hints %v", h)
	}
}

// The Lane is refused wherever a call would not be one lock-free pwrite
// or pread at a fixed offset: a view with holes, atomic mode, a pattern
// not learned yet, a read-only file for writes.
func TestLaneRefused(t *testing.T) {
	path := tempPath(t, "f")
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		if _, ok := f.Lane(true); ok {
			return fmt.Errorf("a lane before any call")
		}
		for i := range 2 {
			if _, err := f.WriteAtAll(Bytes(make([]byte, 8<<10)), int64((i*2+c.Rank())*8<<10)); err != nil {
				return err
			}
		}
		l, ok := f.Lane(true)
		if !ok || l.Calls != firstRecheck-1 || l.EtypeSize != 1 || l.Base != 0 {
			return fmt.Errorf("after two agreed calls: lane %+v, %v; want %d calls", l, ok, firstRecheck-1)
		}
		if _, ok := f.Lane(false); ok {
			return fmt.Errorf("a read lane before any read")
		}
		if err := f.SetAtomicity(true); err != nil {
			return err
		}
		if _, ok := f.Lane(true); ok {
			return fmt.Errorf("a lane in atomic mode")
		}
		if err := f.SetAtomicity(false); err != nil {
			return err
		}
		holes := must(layout.Resized(layout.Bytes(64), 0, 128))
		if err := f.SetView(View{Disp: 0, Etype: layout.Byte, Filetype: holes}, nil); err != nil {
			return err
		}
		for i := range 3 {
			if _, err := f.WriteAtAll(Bytes(make([]byte, 64)), int64(i*2+c.Rank())*64); err != nil {
				return err
			}
		}
		if _, ok := f.Lane(true); ok {
			return fmt.Errorf("a lane through a view with holes")
		}
		return nil
	})
}
