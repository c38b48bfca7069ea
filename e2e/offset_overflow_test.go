//go:build cgo

package e2e

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// Offsets whose byte positions do not fit in int64, under mpirun. With
// 8-byte etypes, etype offset 2^61+1 is byte 2^64+8: the host MPI-IO
// (OMPIO and ROMIO alike) writes it at byte 8 and returns success. collio
// returns MPI_ERR_ARG's class naming the offset, the same on every rank
// of a collective call when one rank passed it, and writes nothing.
func TestOverflowMPI(t *testing.T) {
	const wrap = 1<<61 + 1
	const last = math.MaxInt64 / 8 // byte 2^63-8: one etype there ends at 2^63
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		bad := p - 1
		badRank := fmt.Sprintf("(rank %d)", bad)
		wrapped := fmt.Sprintf("offset %d", int64(wrap))
		dir := mpirunner.TempDir(t, c)
		path := filepath.Join(dir, "overflow")
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_collective_timeout": "20"})
		together(t, c, err, "open")
		together(t, c, f.SetView(0, collio.Int64, collio.Int64, nil), "set_view")
		buf := make([]byte, 8)
		off := int64(r)
		if r == bad {
			off = wrap
		}

		_, err = f.WriteAtAll(buf, off)
		sameOverflow(t, c, "write_at_all", err, "write_at_all", badRank, wrapped)
		_, err = f.ReadAtAll(buf, off)
		sameOverflow(t, c, "read_at_all", err, "read_at_all", badRank, wrapped)
		req, err := f.IWriteAtAll(buf, off)
		together(t, c, err, "iwrite_at_all start")
		_, err = req.Wait()
		sameOverflow(t, c, "iwrite_at_all", err, "write_at_all", badRank, wrapped)
		// The file pointer of one rank at the last etype: 16 bytes from
		// there end past 2^63-1.
		err = nil
		if r == bad {
			_, err = f.Seek(last, io.SeekStart)
		}
		together(t, c, err, "seek to the last etype")
		_, err = f.WriteAll(make([]byte, 16))
		sameOverflow(t, c, "write_all", err, "write_all", badRank, fmt.Sprintf("offset %d", int64(last)))

		// Independent calls and seeks: this rank's own error.
		_, err = f.WriteAt(buf, wrap)
		ownOverflow(t, c, "write_at", err, "write_at", wrapped)
		_, err = f.Seek(wrap, io.SeekStart)
		ownOverflow(t, c, "seek", err, "seek", wrapped)

		// The shared file pointer: seek_shared past the end, shared writes
		// from the last etype, and ordered writes from the one before,
		// where rank 0's data fits and rank 1's ends at 2^63.
		_, err = f.SeekShared(wrap, io.SeekStart)
		sameOverflow(t, c, "seek_shared", err, "seek_shared", wrapped)
		_, err = f.SeekShared(last, io.SeekStart)
		together(t, c, err, "seek_shared to the last etype")
		_, err = f.WriteShared(make([]byte, 16))
		ownOverflow(t, c, "write_shared", err, "write_shared", "offset ")
		together(t, c, c.Barrier(), "barrier") // every shared write is done before the pointer moves
		if p > 1 {
			_, err = f.SeekShared(last-1, io.SeekStart)
			together(t, c, err, "seek_shared before the last etype")
			_, err = f.WriteOrdered(buf)
			sameOverflow(t, c, "write_ordered", err, "write_ordered", "(rank 1)", fmt.Sprintf("offset %d", int64(last)))
		}

		together(t, c, f.Close(), "close")
		if r == 0 {
			st, err := os.Stat(path)
			if err != nil || st.Size() != 0 {
				t.Errorf("the file must be empty: %v, %v", st, err)
			}
		}
		checkpoint(t, c)
	})
}

// sameOverflow checks that err is ErrArg mentioning each of want, with
// the same text on every rank.
func sameOverflow(t *testing.T, c comm.Comm, what string, err error, want ...string) {
	t.Helper()
	ownOverflow(t, c, what, err, want...)
	texts := gatherStrings(t, c, fmt.Sprint(err))
	for q, s := range texts {
		if s != texts[0] {
			t.Errorf("%s: rank %d's error %q differs from rank 0's %q", what, q, s, texts[0])
		}
	}
	checkpoint(t, c)
}

// ownOverflow checks that err is ErrArg mentioning each of want.
func ownOverflow(t *testing.T, c comm.Comm, what string, err error, want ...string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error", what)
	case !errors.Is(err, collio.ErrArg):
		t.Errorf("%s: %v is not ErrArg", what, err)
	default:
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", what, err, w)
			}
		}
	}
	checkpoint(t, c)
}
