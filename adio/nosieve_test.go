package adio

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// lockCounting is ufs with a count of the byte-range locks taken.
type lockCounting struct{ driver.Driver }

var locksTaken atomic.Int64

func (lockCounting) Name() string { return "lockcount" }

func (d lockCounting) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	f, err := d.Driver.Open(path, opts)
	if err != nil {
		return nil, err
	}
	return countedLocks{f}, nil
}

type countedLocks struct{ driver.File }

func (f countedLocks) Lock(off, n int64, exclusive bool) error {
	locksTaken.Add(1)
	return f.File.Lock(off, n, exclusive)
}

func init() {
	ufs, _ := driver.ByName("ufs")
	driver.Register(lockCounting{ufs})
}

// stridedView gives rank r of n blocks of piece bytes every n*piece bytes,
// starting at its own slot: the ranks' ranges interleave.
func stridedView(t *testing.T, r, n int, piece int) View {
	ft, err := layout.Vector(1, piece, n*piece, layout.Byte)
	require.NoError(t, err)
	ft, err = layout.Resized(ft, 0, int64(n*piece))
	require.NoError(t, err)
	return View{Disp: int64(r * piece), Etype: layout.Byte, Filetype: ft}
}

// With interleaved ranges, independent writes lock each run only where a
// rank may read-modify-write: pieces of 64 KiB take no lock, pieces of
// 1 KiB (automatic sieving combines them) do; the files are right either
// way. That needs the ranks' entry records: with no communication at all
// (collio_error_agreement=deferred and the strategy fixed by the hints)
// every write locks unless romio_ds_write=disable.
func TestIndependentWritesLockOnlyForSieving(t *testing.T) {
	immediate := map[string]string{"collio_error_agreement": "immediate"}
	for _, tc := range []struct {
		piece int
		hints map[string]string
		locks bool
	}{
		{64 << 10, immediate, false},
		{1 << 10, immediate, true},
		{1 << 10, map[string]string{"romio_ds_write": "disable", "collio_error_agreement": "immediate"}, false},
		{64 << 10, map[string]string{"romio_ds_write": "enable", "collio_error_agreement": "immediate"}, true},
		{64 << 10, nil, true},
		{1 << 10, map[string]string{"romio_ds_write": "disable"}, false},
		{1 << 10, map[string]string{"romio_cb_write": "disable", "collio_strategy": "auto"}, true},
	} {
		name := fmt.Sprintf("piece %d, %v", tc.piece, tc.hints)
		path := tempPath(t, "f")
		h := map[string]string{"collio_strategy": "independent"}
		for k, v := range tc.hints {
			h[k] = v
		}
		const n, pieces = 3, 8
		locksTaken.Store(0)
		world(t, n, func(c comm.Comm) error {
			f, err := Open(c, "lockcount:"+path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			v := stridedView(t, c.Rank(), n, tc.piece)
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			_, err = f.WriteAtAll(Bytes(rankData(c.Rank(), int64(pieces*tc.piece))), 0)
			return err
		})
		if tc.locks {
			require.Positive(t, locksTaken.Load(), name)
		} else {
			require.Zero(t, locksTaken.Load(), name)
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		want := make([]byte, n*pieces*tc.piece)
		for r := 0; r < n; r++ {
			data := rankData(r, int64(pieces*tc.piece))
			for k := 0; k < pieces; k++ {
				copy(want[(k*n+r)*tc.piece:], data[k*tc.piece:(k+1)*tc.piece])
			}
		}
		require.True(t, bytes.Equal(want, got), name)
	}
}

// Ranks whose ranges do not interleave write without locks, but only
// while a barrier follows: with the closing agreement deferred each rank
// takes one lock over its own range per call (none where no write may
// sieve), so a later sieving write of another rank cannot cover its bytes
// meanwhile.
func TestDeferredSeparateWritesLockTheirRangeOnce(t *testing.T) {
	for _, tc := range []struct {
		hints map[string]string
		locks int64
	}{
		{map[string]string{"collio_error_agreement": "immediate"}, 0},
		{nil, 3},
		{map[string]string{"romio_ds_write": "disable"}, 0},
	} {
		path := tempPath(t, "f")
		h := map[string]string{"collio_strategy": "independent"}
		for k, v := range tc.hints {
			h[k] = v
		}
		locksTaken.Store(0)
		world(t, 3, func(c comm.Comm) error {
			f, err := Open(c, "lockcount:"+path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			// Four 1 KiB pieces with gaps, inside the rank's own 64 KiB.
			v := View{Disp: int64(c.Rank()) << 16, Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(1024), 0, 4096))}
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			_, err = f.WriteAtAll(Bytes(rankData(c.Rank(), 4096)), 0)
			return err
		})
		require.Equal(t, tc.locks, locksTaken.Load(), "%v", tc.hints)
	}
}

// With every rank's view contiguous no access has several runs, so no
// rank can read-modify-write another's bytes: writes take no locks, even
// with no communication at all; one rank with a noncontiguous view makes
// every rank lock again.
func TestContiguousViewsWriteWithoutLocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hints   map[string]string
		strided int // rank with a noncontiguous view; -1: none
		locks   bool
	}{
		{"cb_disable", map[string]string{"romio_cb_write": "disable"}, -1, false},
		{"automatic", nil, -1, false},
		{"cb_disable, rank 1 strided", map[string]string{"romio_cb_write": "disable"}, 1, true},
	} {
		path := tempPath(t, "f")
		locksTaken.Store(0)
		world(t, 3, func(c comm.Comm) error {
			r := c.Rank()
			f, err := Open(c, "lockcount:"+path, ModeCreate|ModeRdWr, OpenOptions{Hints: tc.hints})
			if err != nil {
				return err
			}
			defer f.Close()
			v := View{Disp: int64(r) << 16, Etype: layout.Byte, Filetype: layout.Byte}
			if r == tc.strided {
				v.Filetype = must(layout.Resized(layout.Bytes(1024), 0, 4096))
			}
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			for i := range 4 {
				if _, err := f.WriteAtAll(Bytes(rankData(r, 1024)), int64(1024*i)); err != nil {
					return err
				}
			}
			return nil
		})
		if tc.locks {
			require.Positive(t, locksTaken.Load(), tc.name)
		} else {
			require.Zero(t, locksTaken.Load(), tc.name)
		}
	}
}

// mayWriteSieve answers no only where no write window can have holes.
func TestMayWriteSieve(t *testing.T) {
	world(t, 1, func(c comm.Comm) error {
		check := func(hints map[string]string, v View, a Access, want bool, what string) {
			f, err := Open(c, tempPath(t, "f"), ModeCreate|ModeRdWr, OpenOptions{Hints: hints})
			require.NoError(t, err)
			defer f.Close()
			require.Equal(t, want, f.mayWriteSieve(v, a, 0), what)
		}
		whole := View{Etype: layout.Byte, Filetype: layout.Byte}
		big, small := stridedView(t, 0, 3, 64<<10), stridedView(t, 0, 3, 1<<10)
		data := func(n int) Access { return Bytes(make([]byte, n)) }
		check(nil, whole, data(1<<20), false, "one run")
		check(nil, big, data(4<<20), false, "runs of 64 KiB, automatic sieving")
		check(nil, small, data(1<<20), true, "runs of 1 KiB")
		check(map[string]string{"romio_ds_write": "enable"}, big, data(4<<20), true, "sieving enabled")
		check(map[string]string{"romio_ds_write": "disable"}, small, data(1<<20), false, "sieving disabled")
		check(nil, big, data(0), false, "nothing to write")
		strided, err := layout.Vector(1024, 1, 2, layout.Byte) // every other byte of 2 KiB
		require.NoError(t, err)
		mem := Access{Buf: make([]byte, 2<<20), Count: 1024, MemType: strided}
		check(nil, big, mem, true, "noncontiguous memory: pieces are small at the holes")
		check(nil, stridedView(t, 0, 2, 32<<10), data(sieveRunBudget*32<<10), false, "as many runs as the budget")
		check(nil, stridedView(t, 0, 2, 32<<10), data((sieveRunBudget+1)*32<<10), true, "past the budget")
		return nil
	})
}

// recordingFile records the write calls a batcher makes.
type recordingFile struct {
	driver.File
	calls []string
}

func (f *recordingFile) WriteV(bufs [][]byte, off int64) (int, error) {
	f.calls = append(f.calls, fmt.Sprintf("writev %d+%d", off, len(bufs)))
	return 0, nil
}

func (f *recordingFile) WriteRuns(runs []driver.Run) (int64, error) {
	f.calls = append(f.calls, fmt.Sprintf("runs %d from %d", len(runs), runs[0].Off))
	return 0, nil
}

func (f *recordingFile) Lock(off, n int64, exclusive bool) error { return nil }
func (f *recordingFile) Unlock(off, n int64) error               { return nil }

// Runs written straight from the caller's buffer with no lock are held
// and written in batches of driver.HeldBufs buffers, in file order, when the
// transfer ends; locked runs are written at once.
func TestHeldRuns(t *testing.T) {
	write := func(lock bool, count int) []string {
		f := &recordingFile{}
		b := &batcher{f: f, mem: make([]byte, 2*count), bufSize: 1 << 20, lock: lock}
		for i := range int64(count) {
			// Pieces of 2 bytes every 4: one run each.
			require.NoError(t, b.add(piece{mem: 2 * i, file: 4 * i, n: 2}, b.flushWrite))
		}
		require.NoError(t, b.finishWrite())
		return f.calls
	}
	require.Equal(t, []string{"runs 3 from 0"}, write(false, 3))
	require.Equal(t, []string{"runs 4096 from 0", "runs 4096 from 16384", "runs 8 from 32768"}, write(false, 2*driver.HeldBufs+8))
	require.Equal(t, []string{"writev 0+1", "writev 4+1"}, write(true, 2))
}

// Independent reads of large pieces go in one batch; across end of file
// they return the bytes before it, in data order, and zeros after.
func TestIndependentReadsInABatch(t *testing.T) {
	const piece, n = 64 << 10, 3
	path := tempPath(t, "f")
	content := rankData(7, 5*piece+100) // ends 100 bytes into rank 2's second piece
	require.NoError(t, os.WriteFile(path, content, 0o644))
	world(t, n, func(c comm.Comm) error {
		f, err := Open(c, path, ModeRdOnly, OpenOptions{Hints: map[string]string{"collio_strategy": "independent"}})
		if err != nil {
			return err
		}
		defer f.Close()
		r := c.Rank()
		if err := f.SetView(stridedView(t, r, n, piece), nil); err != nil {
			return err
		}
		got := bytes.Repeat([]byte{0xee}, 3*piece)
		count, err := f.ReadAtAll(Bytes(got), 0)
		if err != nil {
			return err
		}
		want := make([]byte, 3*piece)
		for k := 0; k < 3; k++ {
			at := (k*n + r) * piece
			if at < len(content) {
				copy(want[k*piece:(k+1)*piece], content[at:])
			}
		}
		wantCount := int64(0)
		for k := 0; k < 3; k++ {
			wantCount += int64(max(0, min(piece, len(content)-(k*n+r)*piece)))
		}
		if count != wantCount || !bytes.Equal(want, got) {
			return fmt.Errorf("rank %d: read %d bytes (want %d), data right: %v", r, count, wantCount, bytes.Equal(want, got))
		}
		return nil
	})
}
