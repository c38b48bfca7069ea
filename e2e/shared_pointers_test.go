//go:build cgo

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// orderedData is rank r's data in round k of the ordered writes: a
// different whole number of int32s per rank and round.
func orderedData(r, k int) []byte {
	b := make([]byte, 4*(r+1+2*k))
	for i := range b {
		b[i] = byte(1 + r*41 + k*17 + i)
	}
	return b
}

// Ordered writes through a strided view (every third int32 from byte 8)
// equal the host MPI-IO's MPI_File_write_ordered byte for byte; every
// rank's offsets and the shared pointer follow rank order; ReadOrdered
// reads the data back.
func TestOrderedMatchesHost(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		const rounds = 3
		ft, err := collio.Resized(collio.Int32, 0, 12)
		together(t, c, err, "filetype")

		path := filepath.Join(dir, "collio")
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "20"})
		together(t, c, err, "open")
		together(t, c, f.SetView(8, collio.Int32, ft, nil), "set_view")
		var start int64 // etypes before this round
		for k := range rounds {
			n, err := f.WriteOrdered(orderedData(r, k))
			together(t, c, err, "write_ordered %d", k)
			if n != len(orderedData(r, k)) {
				t.Errorf("write_ordered %d moved %d bytes, want %d", k, n, len(orderedData(r, k)))
			}
			for q := range p {
				start += int64(len(orderedData(q, k)) / 4)
			}
			pos, err := f.PositionShared()
			together(t, c, err, "get_position_shared")
			if pos != start {
				t.Errorf("shared pointer %d after round %d, want %d", pos, k, start)
			}
			together(t, c, c.Barrier(), "barrier") // all read it before the next round moves it
		}
		got, err := f.SeekShared(0, io.SeekStart)
		together(t, c, err, "seek_shared")
		if got != 0 {
			t.Errorf("seek_shared to 0 gave %d", got)
		}
		for k := range rounds {
			buf := make([]byte, len(orderedData(r, k)))
			_, err := f.ReadOrdered(buf)
			together(t, c, err, "read_ordered %d", k)
			if !bytes.Equal(buf, orderedData(r, k)) {
				t.Errorf("read_ordered %d: %s", k, firstDiff(buf, orderedData(r, k)))
			}
		}
		together(t, c, f.Close(), "close")

		hpath := filepath.Join(dir, "host")
		hf, err := mpi.HostOpen(c.(mpi.Comm), hpath, mpi.ModeCreate|mpi.ModeWrOnly, nil)
		together(t, c, err, "host open")
		hft, err := mpi.TypeResized(mpi.TypeInt(), 0, 12)
		together(t, c, err, "host filetype")
		together(t, c, hf.SetView(8, mpi.TypeInt(), hft, "native", nil), "host set_view")
		for k := range rounds {
			d := orderedData(r, k)
			_, err := hf.WriteOrdered(d, len(d)/4, mpi.TypeInt())
			together(t, c, err, "host write_ordered %d", k)
		}
		together(t, c, errors.Join(hf.Close(), hft.Free()), "host close")

		if r == 0 {
			mine, err1 := os.ReadFile(path)
			host, err2 := os.ReadFile(hpath)
			switch {
			case err1 != nil || err2 != nil:
				t.Errorf("reading the files: %v", errors.Join(err1, err2))
			case !bytes.Equal(mine, host):
				t.Errorf("collio's ordered writes differ from the host MPI-IO's: %s", firstDiff(mine, host))
			case len(host) == 0:
				t.Errorf("the host wrote nothing")
			}
		}
		checkpoint(t, c)
	})
}

// sharedRecord is one shared write: rank, number and length, then a payload
// whose length varies with rank and number.
func sharedRecord(r, i int) []byte {
	n := 5 + (r*7+i*3)%11
	b := make([]byte, 3+n)
	b[0], b[1], b[2] = byte(r), byte(i), byte(n)
	for k := range n {
		b[3+k] = byte(r*31 + i*5 + k)
	}
	return b
}

// Shared writes from every rank at once give a file with every rank's
// records exactly once and nothing else. The file is then opened again on
// the same communicator (the pointer's window is reused): the pointer
// starts at 0, or at the end with ModeAppend; SeekShared and
// PositionShared agree on every rank; bad arguments fail with the same
// clear error on every rank.
func TestSharedPointer(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		path := filepath.Join(dir, "shared")
		const per = 50
		h := collio.Hints{"collio_collective_timeout": "20"}
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeWrOnly, h)
		together(t, c, err, "open")
		var werr error
		for i := range per {
			if _, err := f.WriteShared(sharedRecord(r, i)); err != nil && werr == nil {
				werr = err
			}
		}
		together(t, c, werr, "write_shared")
		together(t, c, f.Close(), "close")
		var total int64
		for q := range p {
			for i := range per {
				total += int64(len(sharedRecord(q, i)))
			}
		}
		if r == 0 {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("reading the file: %v", err)
			}
			seen := map[[2]int]bool{}
			for at := 0; at < len(data); {
				if at+3 > len(data) {
					t.Errorf("a record header runs past the end at %d", at)
					break
				}
				q, i := int(data[at]), int(data[at+1])
				want := sharedRecord(q, i)
				if at+len(want) > len(data) || !bytes.Equal(data[at:at+len(want)], want) || seen[[2]int{q, i}] {
					t.Errorf("record at %d (rank %d, number %d) is damaged or repeated", at, q, i)
					break
				}
				seen[[2]int{q, i}] = true
				at += len(want)
			}
			if len(seen) != p*per || int64(len(data)) != total {
				t.Errorf("the file has %d records in %d bytes, want %d in %d", len(seen), len(data), p*per, total)
			}
		}
		checkpoint(t, c)

		positions := func(what string, want int64) {
			pos, err := f.PositionShared()
			together(t, c, err, "%s: get_position_shared", what)
			all := gatherStrings(t, c, fmt.Sprint(pos))
			for q, s := range all {
				if s != fmt.Sprint(want) {
					t.Errorf("%s: rank %d sees the shared pointer at %s, want %d", what, q, s, want)
				}
			}
		}
		f, err = collio.Open(c, path, collio.ModeRdWr, h)
		together(t, c, err, "reopen")
		positions("reopened", 0)
		for _, s := range []struct {
			off    int64
			whence int
			want   int64
		}{{7, io.SeekStart, 7}, {-3, io.SeekCurrent, 4}, {-10, io.SeekEnd, total - 10}} {
			got, err := f.SeekShared(s.off, s.whence)
			together(t, c, err, "seek_shared(%d, %d)", s.off, s.whence)
			if got != s.want {
				t.Errorf("seek_shared(%d, %d) gave %d, want %d", s.off, s.whence, got, s.want)
			}
			positions(fmt.Sprintf("after seek_shared(%d, %d)", s.off, s.whence), s.want)
		}
		for _, e := range []struct {
			name  string
			off   int64
			wh    int
			class error
			text  string
		}{
			{"bad whence", 0, 9, collio.ErrArg, "whence 9 is not"},
			{"negative offset", -1, io.SeekStart, collio.ErrArg, "offset -1 is negative"},
			{"negative result", -total - 1, io.SeekEnd, collio.ErrArg, "is negative"},
			{"different offsets", int64(r), io.SeekStart, collio.ErrNotSame, "different offsets"},
		} {
			if p == 1 && e.class == collio.ErrNotSame {
				continue // one rank cannot disagree with itself
			}
			_, err := f.SeekShared(e.off, e.wh)
			if !errors.Is(err, e.class) || !strings.Contains(fmt.Sprint(err), e.text) {
				t.Errorf("%s: got %v, want %v with %q", e.name, err, e.class, e.text)
			}
			all := gatherStrings(t, c, fmt.Sprint(err))
			for q := range all {
				if all[q] != all[0] {
					t.Errorf("%s: rank %d's error %q differs from rank 0's %q", e.name, q, all[q], all[0])
				}
			}
		}
		together(t, c, f.Close(), "close")
		f, err = collio.Open(c, path, collio.ModeWrOnly|collio.ModeAppend, h)
		together(t, c, err, "open to append")
		positions("append", total)
		together(t, c, f.Close(), "close")
	})
}

// The shared-pointer tests again with the pointer served over TCP by rank
// 0 (COLLIO_SHARED_FP_SERVER=1), as it is across nodes, where MPI windows
// need RDMA.
func TestSharedPointerServed(t *testing.T) {
	was := mpi.ForceCounterServer(true)
	defer mpi.ForceCounterServer(was)
	t.Run("write_shared", TestSharedPointer)
	t.Run("write_ordered", TestOrderedMatchesHost)
}
