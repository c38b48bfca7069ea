package adio

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// How a call of a learned pattern went, from its reason.
func callKind(reason string) string {
	switch {
	case strings.Contains(reason, "checked in the background"):
		return "posted"
	case strings.Contains(reason, "repeated without inter-rank communication"):
		return "repeated"
	}
	return "agreed"
}

// recheckPoints are the calls of one direction (from 0) that post a
// check while every check holds: calls 0 and 1 agree, then a check is
// posted 16 calls later (call 17), then 32, 64, ... and lastRecheck calls apart.
func recheckPoints(upTo int) []int {
	var points []int
	for p, step := independentStreak+firstRecheck-1, 2*firstRecheck; p < upTo; p, step = p+step, min(2*step, lastRecheck) {
		points = append(points, p)
	}
	return points
}

// wantKind is where call i of one direction stands when every check
// holds: agreed, posting a check (from the third on, evaluating the one
// posted two points before), or repeating.
func wantKind(i int) string {
	switch {
	case i < independentStreak:
		return "agreed"
	case slices.Contains(recheckPoints(i+1), i):
		return "posted"
	}
	return "repeated"
}

// A learned pattern is rechecked in the background: no call after the
// first two waits for the other ranks, the data is right, and a
// synchronizing call or close completes the last posted check.
func TestBackgroundRecheck(t *testing.T) {
	const piece, calls = 8 << 10, 1700 // 8 KiB: above the small-piece rule, so independent
	path := tempPath(t, "f")
	kinds := make([][]string, 4)
	world(t, 4, func(c comm.Comm) error {
		p, r := c.Size(), c.Rank()
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		for i := range calls {
			if _, err := f.WriteAtAll(Bytes(rankData(r+i*p, piece)), int64((i*p+r)*piece)); err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
			last, _ := f.Stats()
			kinds[r] = append(kinds[r], callKind(last.Reason))
		}
		if err := f.Sync(); err != nil { // completes the checks still posted
			return err
		}
		for i := range calls {
			got := make([]byte, piece)
			if _, err := f.ReadAtAll(Bytes(got), int64((i*p+r)*piece)); err != nil {
				return fmt.Errorf("read %d: %w", i, err)
			}
			if !bytes.Equal(got, rankData(r+i*p, piece)) {
				return fmt.Errorf("read %d: data differs", i)
			}
		}
		return f.Close() // completes the reads' last check
	})
	for r, ks := range kinds {
		for i, k := range ks {
			require.Equal(t, wantKind(i), k, "rank %d, write %d", r, i)
		}
	}
}

// A pattern that changes while calls repeat without communication is
// caught by the check posted after the change, evaluated two recheck
// points later: from there two-phase serves the interleaved small pieces,
// and the file equals what independent writes give.
func TestBackgroundRecheckSeesNewPattern(t *testing.T) {
	const switchAt, calls = 40, 1800
	path := tempPath(t, "f")
	strategies := make([][]string, 4)
	var want []byte
	// 4-byte records, one per rank in each 256-byte tile: a call of one
	// record per rank does not interleave; a call of two records per rank
	// interleaves with data density 1/32, which two-phase serves.
	ft := must(layout.Resized(layout.Bytes(4), 0, 256))
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		// The table's choice, not the measured one: this test follows
		// the rechecks.
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"collio_measure": "disable"}})
		if err != nil {
			return err
		}
		v := View{Disp: int64(4 * r), Etype: layout.Byte, Filetype: ft}
		if err := f.SetView(v, nil); err != nil {
			return err
		}
		off := int64(0)
		for i := range calls {
			n := int64(4)
			if i >= switchAt {
				n = 8
			}
			if _, err := f.WriteAtAll(Bytes(rankData(r+4*i, n)), off); err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
			off += n
			last, _ := f.Stats()
			strategies[r] = append(strategies[r], last.Strategy)
		}
		return f.Close()
	})
	for r := range 4 {
		v := View{Disp: int64(4 * r), Etype: layout.Byte, Filetype: ft}
		off := int64(0)
		for i := range calls {
			n := int64(4)
			if i >= switchAt {
				n = 8
			}
			want = expected(want, v, off, rankData(r+4*i, n))
			off += n
		}
	}
	require.Equal(t, want, readFile(t, path)[:len(want)])
	// The check posted at call 17 (old pattern) holds at the third point;
	// the one posted at 49 (new pattern) is evaluated at the fourth, which
	// synchronizes.
	points := recheckPoints(calls)
	require.Equal(t, 49, points[1])
	caught := points[1+maxChecksInFlight]
	for r, ss := range strategies {
		for i, s := range ss {
			want := "independent"
			if i >= caught {
				want = "twophase"
			}
			require.Equal(t, want, s, "rank %d, write %d", r, i)
		}
	}
}

// A write that fails on one rank while calls repeat without
// communication is that rank's error at once, and every rank's at the
// recheck point whose evaluated record carries it; the calls in between
// succeed on the other ranks.
func TestBackgroundRecheckCarriesError(t *testing.T) {
	const piece, calls, failAt = 8 << 10, 1800, 40
	path := "faulty:" + tempPath(t, "f")
	h := map[string]string{"collio_fault": fmt.Sprintf("eio_call=write:%d", failAt+1), "collio_fault_ranks": "2"}
	errs := make([][]error, 4)
	world(t, 4, func(c comm.Comm) error {
		p, r := c.Size(), c.Rank()
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		for i := range calls {
			_, err := f.WriteAtAll(Bytes(rankData(r, piece)), int64((i*p+r)*piece))
			errs[r] = append(errs[r], err)

		}
		return f.Close()
	})
	// The failure (call 40) is after the check posted at 17, so it rides
	// on the one posted at 49, evaluated two points later: that call
	// synchronizes and returns the owed error on every rank.
	reported := recheckPoints(calls)[1+maxChecksInFlight]
	for r, es := range errs {
		for i, err := range es {
			switch {
			case i == failAt && r == 2, i == reported:
				require.ErrorIs(t, err, ioerr.ErrIO, "rank %d, write %d", r, i)
				if i == reported {
					require.Contains(t, err.Error(), fmt.Sprintf("an earlier collective call failed (call %d, write_at_all, on rank 2)", failAt+1))
					require.Equal(t, errs[0][i].Error(), err.Error(), "rank %d's text", r)
				}
			default:
				require.NoError(t, err, "rank %d, write %d", r, i)
			}
		}
	}
}
