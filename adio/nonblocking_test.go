package adio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

// Transfers in flight at once on a file must not read-modify-write: one's
// window, read before another wrote its bytes inside it, would be written
// back over them (a lost update that TestNonblockingCollective caught in
// about one run in ten). Operation Files never sieve writes, and the file
// itself does not while any is pending.
func TestNoReadModifyWriteWhileTransfersAreInFlight(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		f, err := Open(c, filepath.Join(dir, "f"), ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"romio_ds_write": "enable"}})
		if err != nil {
			return err
		}
		require.True(t, f.sieves(true), "sieving writes before any transfer")
		r, err := f.IWriteAtAll(Bytes(make([]byte, 64)), int64(64*c.Rank()))
		if err != nil {
			return err
		}
		require.False(t, f.sieves(true), "no sieving while a transfer is pending")
		require.False(t, r.of.sieves(true), "the operation's File never sieves writes")
		if _, err := r.Wait(); err != nil {
			return err
		}
		require.True(t, f.sieves(true), "sieving again once it was waited for")
		return f.Close()
	}))
}

// Nonblocking operations learn a repeating independent pattern as blocking
// calls do, the same on every rank: an operation starts from what the
// file's blocking calls had learned when it started, or from what the
// operations before it on its slot learned, whichever is longer; a new
// view forgets both. The data is checked.
func TestNonblockingLearnsThePattern(t *testing.T) {
	dir := t.TempDir()
	const piece = 8 << 10 // above the small-piece rule: independent
	world(t, 3, func(c comm.Comm) error {
		p, r := c.Size(), c.Rank()
		f, err := Open(c, filepath.Join(dir, "f"), ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		call := 0
		next := func() (Access, int64) {
			call++
			return Bytes(rankData(r+p*call, piece)), int64((call*p + r) * piece)
		}
		// expect checks the last call: independent, and repeated without
		// agreement or not.
		expect := func(what string, want bool) error {
			last, _ := f.Stats()
			if last.Strategy != "independent" || (last.Reason == repeatReason) != want {
				return fmt.Errorf("%s (call %d): strategy %s, reason %q; want repeated without agreement: %v", what, call, last.Strategy, last.Reason, want)
			}
			return nil
		}
		blocking := func(what string, want bool) error {
			a, off := next()
			if _, err := f.WriteAtAll(a, off); err != nil {
				return err
			}
			return expect(what, want)
		}
		nonblocking := func(what string, want bool) error {
			a, off := next()
			req, err := f.IWriteAtAll(a, off)
			if err != nil {
				return err
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			return expect(what, want)
		}
		// No blocking call yet: each of the 4 slots learns from its own
		// operations, two agreed ones each.
		for i := range 12 {
			if err := nonblocking(fmt.Sprintf("nonblocking write %d", i), i >= 8); err != nil {
				return err
			}
		}
		// The file's blocking calls learn on their own.
		for i := range 3 {
			if err := blocking(fmt.Sprintf("blocking write %d", i), i >= 2); err != nil {
				return err
			}
		}
		// A view of another shape forgets everything; an operation
		// started after blocking calls learned again starts from their
		// streak.
		if err := f.SetView(View{Etype: layout.Byte, Filetype: layout.Bytes(piece)}, nil); err != nil {
			return err
		}
		if err := nonblocking("the first nonblocking write after set_view", false); err != nil {
			return err
		}
		for i := range 2 {
			if err := blocking(fmt.Sprintf("blocking write %d after set_view", i), false); err != nil {
				return err
			}
		}
		if err := nonblocking("a nonblocking write after two agreed blocking ones", true); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, "f"))
		if err != nil {
			return err
		}
		for k := 1; k <= call; k++ {
			at := (k*p + r) * piece
			if at+piece > len(b) || !bytes.Equal(b[at:at+piece], rankData(r+p*k, piece)) {
				return fmt.Errorf("call %d's data differs", k)
			}
		}
		return nil
	})
}

// serialComm is a communicator whose MPI library allows no concurrent
// calls (a thread level below MPI_THREAD_MULTIPLE); what it makes keeps
// the level.
type serialComm struct{ comm.Comm }

func (serialComm) ConcurrentCalls() bool { return false }
func (s serialComm) Unwrap() comm.Comm   { return s.Comm }
func (s serialComm) Dup() (comm.Comm, error) {
	d, err := s.Comm.Dup()
	if err != nil {
		return nil, err
	}
	return serialComm{d}, nil
}

// Below MPI_THREAD_MULTIPLE a transfer cannot run on a goroutine of its
// own (its MPI calls would run beside the program's): it runs inside its
// start call, a collective call every rank is in. So a start waits for the
// last rank to start, and the request is complete when the start returns.
// Writes and reads of several operations, the data checked.
func TestNonblockingBelowThreadMultipleRunsInTheStart(t *testing.T) {
	dir := t.TempDir()
	const piece = 4 << 10
	const late = 200 * time.Millisecond
	world(t, 3, func(c comm.Comm) error {
		p, r := c.Size(), c.Rank()
		f, err := Open(serialComm{c}, filepath.Join(dir, "f"), ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		var reqs []*Request
		for k := range 4 {
			if r == 0 && k == 0 {
				time.Sleep(late)
			}
			t0 := time.Now()
			req, err := f.IWriteAtAll(Bytes(rankData(r+p*k, piece)), int64((k*p+r)*piece))
			if err != nil {
				return err
			}
			if k == 0 && r != 0 && time.Since(t0) < late/2 {
				return fmt.Errorf("rank %d: the first start returned after %v, before rank 0 started", r, time.Since(t0))
			}
			if done, _, _ := req.Test(); !done {
				return fmt.Errorf("rank %d: write %d not complete when its start returned", r, k)
			}
			reqs = append(reqs, req)
		}
		for _, req := range reqs {
			if n, err := req.Wait(); err != nil || n != piece {
				return fmt.Errorf("write: %d bytes, %v", n, err)
			}
		}
		for k := range 4 {
			buf := make([]byte, piece)
			req, err := f.IReadAtAll(Bytes(buf), int64((k*p+(r+1)%p)*piece))
			if err != nil {
				return err
			}
			if done, _, _ := req.Test(); !done {
				return fmt.Errorf("rank %d: read %d not complete when its start returned", r, k)
			}
			if _, err := req.Wait(); err != nil {
				return err
			}
			if !bytes.Equal(buf, rankData((r+1)%p+p*k, piece)) {
				return fmt.Errorf("rank %d: read %d differs", r, k)
			}
		}
		return f.Close()
	})
}
