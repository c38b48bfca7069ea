package adio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// sharedRecord is one shared write in tests: a header naming the rank and the
// record number, then a payload whose length varies with both.
func sharedRecord(rank, i int) []byte {
	n := 4 + (rank*7+i*3)%9
	b := make([]byte, 3+n)
	b[0], b[1], b[2] = byte(rank), byte(i), byte(n)
	for k := range n {
		b[3+k] = byte(rank*31 + i*5 + k)
	}
	return b
}

// Shared writes from every rank, on the in-memory communicator: the file
// holds every rank's records exactly once, back to back, each where its
// WriteShared said; the pointer ends past all of them.
func TestWriteSharedEveryRecordOnce(t *testing.T) {
	for _, n := range []int{4, 3} {
		path := tempPath(t, "shared")
		const per = 20
		var mu sync.Mutex
		where := map[[2]int]int64{}
		world(t, n, func(c comm.Comm) error {
			f, err := Open(c, path, ModeCreate|ModeWrOnly, OpenOptions{})
			if err != nil {
				return err
			}
			for i := range per {
				off, got, err := f.WriteShared(Bytes(sharedRecord(c.Rank(), i)))
				if err != nil {
					return err
				}
				if got != int64(len(sharedRecord(c.Rank(), i))) {
					return fmt.Errorf("write %d moved %d bytes", i, got)
				}
				mu.Lock()
				where[[2]int{c.Rank(), i}] = off
				mu.Unlock()
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			pos, err := f.PositionShared()
			if err != nil {
				return err
			}
			total := int64(0)
			for r := range c.Size() {
				for i := range per {
					total += int64(len(sharedRecord(r, i)))
				}
			}
			if pos != total {
				return fmt.Errorf("rank %d: shared pointer at %d after all writes, want %d", c.Rank(), pos, total)
			}
			return f.Close()
		})
		data := readFile(t, path)
		seen := map[[2]int]bool{}
		for at := 0; at < len(data); {
			require.LessOrEqual(t, at+3, len(data), "n=%d: a record header runs past the end at %d", n, at)
			r, i := int(data[at]), int(data[at+1])
			want := sharedRecord(r, i)
			require.True(t, at+len(want) <= len(data) && bytes.Equal(data[at:at+len(want)], want), "n=%d: record at %d is damaged", n, at)
			require.False(t, seen[[2]int{r, i}], "n=%d: record %d of rank %d twice", n, i, r)
			require.Equal(t, where[[2]int{r, i}], int64(at), "n=%d: record %d of rank %d is not where WriteShared said", n, i, r)
			seen[[2]int{r, i}] = true
			at += len(want)
		}
		require.Len(t, seen, n*per, "n=%d: every rank's records exactly once", n)
	}
}

// Ordered writes through an interleaved view with a 4-byte etype: the data
// lands in rank order from the shared pointer, the pointer (in etypes)
// ends past all of it, ReadOrdered reads it back, ReadShared continues
// from there, and SetView resets the pointer.
func TestOrderedInRankOrder(t *testing.T) {
	for _, n := range []int{4, 3} {
		path := tempPath(t, "ordered")
		ft := must(layout.Resized(layout.Int32, 0, 8)) // every other int32
		v := View{Disp: 4, Etype: layout.Int32, Filetype: ft}
		size := func(r, round int) int { return 4 * (r + 1 + round) }
		data := func(r, round int) []byte { return rankData(r+10*round, int64(size(r, round))) }
		world(t, n, func(c comm.Comm) error {
			r := c.Rank()
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
			if err != nil {
				return err
			}
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			var want int64 // etypes before this round's data of rank r
			for round := range 2 {
				off, got, err := f.WriteOrdered(Bytes(data(r, round)))
				if err != nil {
					return err
				}
				before := want
				for q := range r {
					before += int64(size(q, round) / 4)
				}
				if off != before || got != int64(size(r, round)) {
					return fmt.Errorf("rank %d round %d: ordered write at %d (%d bytes), want %d (%d)", r, round, off, got, before, size(r, round))
				}
				for q := range c.Size() {
					want += int64(size(q, round) / 4)
				}
			}
			pos, err := f.PositionShared()
			if err != nil {
				return err
			}
			if pos != want {
				return fmt.Errorf("rank %d: shared pointer %d after the ordered writes, want %d", r, pos, want)
			}
			if _, err := f.SeekShared(0, io.SeekStart); err != nil {
				return err
			}
			for round := range 2 {
				buf := make([]byte, size(r, round))
				if _, got, err := f.ReadOrdered(Bytes(buf)); err != nil || got != int64(len(buf)) || !bytes.Equal(buf, data(r, round)) {
					return fmt.Errorf("rank %d round %d: ReadOrdered gave %d bytes, %v, equal %v", r, round, got, err, bytes.Equal(buf, data(r, round)))
				}
			}
			// At the end now: a shared read finds nothing.
			if _, got, err := f.ReadShared(Bytes(make([]byte, 8))); err != nil || got != 0 {
				return fmt.Errorf("rank %d: ReadShared at the end gave %d bytes, %v", r, got, err)
			}
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			if pos, err := f.PositionShared(); err != nil || pos != 0 {
				return fmt.Errorf("rank %d: shared pointer %d after SetView (%v), want 0", r, pos, err)
			}
			return f.Close()
		})
		// The file, built independently: the ranks' data in rank order,
		// round after round, through the view.
		var stream []byte
		for round := range 2 {
			for q := range n {
				stream = append(stream, data(q, round)...)
			}
		}
		require.Equal(t, expected(nil, v, 0, stream), readFile(t, path), "n=%d", n)
	}
}

// SeekShared and PositionShared agree on every rank; bad arguments give a
// clear error, the same on every rank.
func TestSeekShared(t *testing.T) {
	path := tempPath(t, "seek")
	const n = 3
	world(t, n, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			if _, err := f.WriteAt(Bytes(make([]byte, 100)), 0); err != nil {
				return err
			}
		}
		if err := f.Sync(); err != nil {
			return err
		}
		for _, s := range []struct {
			off    int64
			whence int
			want   int64
		}{{5, io.SeekStart, 5}, {-2, io.SeekCurrent, 3}, {0, io.SeekEnd, 100}, {-10, io.SeekEnd, 90}, {0, io.SeekCurrent, 90}} {
			got, err := f.SeekShared(s.off, s.whence)
			if err != nil || got != s.want {
				return fmt.Errorf("rank %d: SeekShared(%d, %d) = %d, %v; want %d", c.Rank(), s.off, s.whence, got, err, s.want)
			}
			if pos, err := f.PositionShared(); err != nil || pos != s.want {
				return fmt.Errorf("rank %d: PositionShared = %d, %v after seeking to %d", c.Rank(), pos, err, s.want)
			}
			if err := c.Barrier(); err != nil { // nobody seeks before all have looked
				return err
			}
		}
		return f.Close()
	})

	cases := []struct {
		name  string
		class *ioerr.Class
		text  string
		call  func(f *File, r int) error
	}{
		{"bad whence", ioerr.ErrArg, "whence 7 is not", func(f *File, r int) error { _, err := f.SeekShared(0, 7); return err }},
		{"negative offset", ioerr.ErrArg, "offset -1 is negative", func(f *File, r int) error { _, err := f.SeekShared(-1, io.SeekStart); return err }},
		{"negative result", ioerr.ErrArg, "resulting offset -4 is negative", func(f *File, r int) error { _, err := f.SeekShared(-4, io.SeekCurrent); return err }},
		{"different offsets", ioerr.ErrNotSame, "different offsets", func(f *File, r int) error { _, err := f.SeekShared(int64(r), io.SeekStart); return err }},
		{"ordered, bad size on one rank", ioerr.ErrArg, "not a whole number of etypes", func(f *File, r int) error {
			if err := f.SetView(View{Etype: layout.Int32, Filetype: layout.Int32}, nil); err != nil {
				return err
			}
			p := make([]byte, 8)
			if r == 1 {
				p = p[:3]
			}
			_, _, err := f.WriteOrdered(Bytes(p))
			return err
		}},
	}
	for _, tc := range cases {
		path := tempPath(t, "seekerr")
		errs := sameOnAll(t, n, func(c comm.Comm) error {
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
			if err != nil {
				return err
			}
			err = tc.call(f, c.Rank())
			if cerr := f.Close(); cerr != nil {
				return cerr
			}
			return err
		})
		require.Error(t, errs[0], tc.name)
		require.True(t, errors.Is(errs[0], tc.class), "%s: %v is not %v", tc.name, errs[0], tc.class)
		require.Contains(t, errs[0].Error(), tc.text, tc.name)
	}
}

// Errors of the independent calls, and a file opened without a shared
// pointer.
func TestSharedErrors(t *testing.T) {
	path := tempPath(t, "sharederr")
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		if err := f.SetView(View{Etype: layout.Int32, Filetype: layout.Int32}, nil); err != nil {
			return err
		}
		if _, _, err := f.WriteShared(Bytes(make([]byte, 6))); !errors.Is(err, ioerr.ErrArg) || !strings.Contains(err.Error(), "whole number of etypes") {
			return fmt.Errorf("6 bytes with a 4-byte etype: %v", err)
		}
		if pos, err := f.PositionShared(); err != nil || pos != 0 {
			return fmt.Errorf("a refused write moved the shared pointer to %d (%v)", pos, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		ro, err := Open(c, path, ModeRdOnly, OpenOptions{})
		if err != nil {
			return err
		}
		if _, _, err := ro.WriteShared(Bytes(make([]byte, 4))); !errors.Is(err, ioerr.ErrReadOnly) {
			return fmt.Errorf("shared write to a read-only file: %v", err)
		}
		if err := ro.Close(); err != nil {
			return err
		}
		off, err := Open(c, path, ModeRdWr, OpenOptions{NoSharedPointer: true})
		if err != nil {
			return err
		}
		if _, _, err := off.WriteShared(Bytes(make([]byte, 4))); !errors.Is(err, ioerr.ErrUnsupported) || !strings.Contains(err.Error(), "shared file pointers are unavailable") {
			return fmt.Errorf("shared write without a shared pointer: %v", err)
		}
		if _, _, err := off.WriteOrdered(Bytes(make([]byte, 4))); !errors.Is(err, ioerr.ErrUnsupported) {
			return fmt.Errorf("ordered write without a shared pointer: %v", err)
		}
		return off.Close()
	})
}

// ModeAppend starts the shared pointer at the end of file.
func TestSharedAppend(t *testing.T) {
	path := tempPath(t, "append")
	world(t, 3, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeWrOnly, OpenOptions{})
		if err != nil {
			return err
		}
		if _, _, err := f.WriteOrdered(Bytes(rankData(c.Rank(), 10))); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		f, err = Open(c, path, ModeWrOnly|ModeAppend, OpenOptions{})
		if err != nil {
			return err
		}
		if pos, err := f.PositionShared(); err != nil || pos != 30 {
			return fmt.Errorf("rank %d: shared pointer %d in append mode (%v), want 30", c.Rank(), pos, err)
		}
		return f.Close()
	})
}

// A rank's own argument error (the C library's check of whence) is agreed
// on in seek_shared's first step, as its arguments are: one collective
// call for the agreement, one for rank 0's new position.
func TestSeekSharedCheckedAgreesLocalErrorOnce(t *testing.T) {
	requireAgreesLocalErrorOnce(t, "seek_shared", func(r int) string { return fmt.Sprintf("whence %d is not valid", 10+r) },
		func(f *File, local error) error {
			pos, err := f.SeekSharedChecked(local, 4, io.SeekStart)
			if err == nil && pos != 4 {
				return fmt.Errorf("seek_shared to 4 gave %d", pos)
			}
			return err
		}, 2)
}
