package faulty

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/sim"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rw() driver.OpenOptions { return driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate} }

// openWith opens a fresh temp file through New(ufs, rules...).
func openWith(t *testing.T, rules ...Rule) (driver.File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	f, err := New(ufs.New(), rules...).Open(path, rw())
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, path
}

// requireInjected checks err is an injected errno of the given class.
func requireInjected(t *testing.T, err error, errno syscall.Errno, class *ioerr.Class) {
	t.Helper()
	require.Error(t, err)
	var pe *os.PathError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.ErrorIs(t, err, errno)
	assert.True(t, IsInjected(err))
	assert.Same(t, class, ioerr.ClassOf(err), "%v", err)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

func TestNoFaults(t *testing.T) {
	f, path := openWith(t)
	n, err := f.WriteAt([]byte("hello"), 3)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	n, err = f.WriteV([][]byte{[]byte("ab"), []byte("cd")}, 0)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	b := make([]byte, 8)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	assert.Equal(t, "abcdello", string(b))
	x, y := make([]byte, 3), make([]byte, 5)
	_, err = f.ReadV([][]byte{x, y}, 0)
	require.NoError(t, err)
	assert.Equal(t, "abcdello", string(x)+string(y))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Allocate(0, 100))
	require.NoError(t, f.Truncate(50))
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(50), size)
	require.NoError(t, f.Lock(0, 1, true))
	require.NoError(t, f.Unlock(0, 1))
	assert.Equal(t, driver.Layout{StripeCount: 1, StartTarget: -1}, f.Layout())
	assert.Equal(t, int64(50), fileSize(t, path))
}

func TestNoSpacePerFile(t *testing.T) {
	f, path := openWith(t, NoSpaceAfter(10))
	n, err := f.WriteAt(make([]byte, 6), 0)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	// The write that crosses the limit writes up to it.
	n, err = f.WriteAt(make([]byte, 6), 6)
	assert.Equal(t, 4, n)
	requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
	assert.Equal(t, int64(10), fileSize(t, path))
	n, err = f.WriteV([][]byte{{1}}, 0)
	assert.Zero(t, n)
	requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
	// Empty writes still succeed, reads still work, allocation is refused.
	_, err = f.WriteAt(nil, 0)
	assert.NoError(t, err)
	_, err = f.ReadAt(make([]byte, 10), 0)
	assert.NoError(t, err)
	requireInjected(t, f.Allocate(0, 1), syscall.ENOSPC, ioerr.ErrNoSpace)

	// Another file of the same driver has its own budget.
	g, err := New(ufs.New(), NoSpaceAfter(10)).Open(path+"2", rw())
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, g.Allocate(0, 10))
	requireInjected(t, g.Allocate(0, 11), syscall.ENOSPC, ioerr.ErrNoSpace)
}

func TestNoSpacePerProcess(t *testing.T) {
	d := New(ufs.New(), NoSpaceAfterProcess(100))
	dir := t.TempDir()
	var files []driver.File
	for _, name := range []string{"a", "b"} {
		f, err := d.Open(filepath.Join(dir, name), rw())
		require.NoError(t, err)
		defer f.Close()
		files = append(files, f)
	}
	_, err := files[0].WriteAt(make([]byte, 60), 0)
	require.NoError(t, err)
	n, err := files[1].WriteV([][]byte{make([]byte, 30), make([]byte, 30)}, 0)
	assert.Equal(t, 40, n)
	requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
	_, err = files[0].WriteAt([]byte{1}, 0)
	requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
}

// Concurrent writers never write more than the budget in total.
func TestNoSpaceConcurrent(t *testing.T) {
	f, path := openWith(t, NoSpaceAfter(1000))
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				n, err := f.WriteAt(make([]byte, 17), int64((w*10+i)*17))
				if err != nil && !errors.Is(err, syscall.ENOSPC) {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1000, total)
	assert.LessOrEqual(t, fileSize(t, path), int64(80*17))
}

func TestEIOOnCall(t *testing.T) {
	f, _ := openWith(t, EIOOnCall(OpWrite, 2), EIOFromCall(OpSync, 2), EIOOnCall(OpRead, 1),
		EIOOnCall(OpAllocate, 1), EIOOnCall(OpTruncate, 1), EIOOnCall(OpSize, 1),
		EIOOnCall(OpLock, 1), EIOOnCall(OpUnlock, 1))
	_, err := f.WriteAt([]byte("a"), 0)
	require.NoError(t, err)
	n, err := f.WriteV([][]byte{[]byte("b")}, 0) // the second write
	assert.Zero(t, n)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	assert.Contains(t, err.Error(), "eio_call=write:2")
	_, err = f.WriteAt([]byte("c"), 0)
	require.NoError(t, err, "only the second write fails")

	require.NoError(t, f.Sync())
	for range 3 {
		requireInjected(t, f.Sync(), syscall.EIO, ioerr.ErrIO)
	}
	_, err = f.ReadAt(make([]byte, 1), 0)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	_, err = f.ReadV([][]byte{make([]byte, 1)}, 0)
	require.NoError(t, err)
	requireInjected(t, f.Allocate(0, 1), syscall.EIO, ioerr.ErrIO)
	requireInjected(t, f.Truncate(0), syscall.EIO, ioerr.ErrIO)
	_, err = f.Size()
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	requireInjected(t, f.Lock(0, 1, true), syscall.EIO, ioerr.ErrIO)
	requireInjected(t, f.Unlock(0, 1), syscall.EIO, ioerr.ErrIO)
}

func TestEIOOnAnyCallAndClose(t *testing.T) {
	f, _ := openWith(t, EIOOnCall(OpAny, 3), EIOOnCall(OpClose, 1))
	require.NoError(t, f.Sync())
	_, err := f.Size()
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("x"), 0)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	requireInjected(t, f.Close(), syscall.EIO, ioerr.ErrIO)
	assert.Error(t, f.Close(), "the inner file was closed anyway")
}

func TestEIOOnOpen(t *testing.T) {
	d := New(ufs.New(), EIOOnCall(OpOpen, 2))
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, rw())
	require.NoError(t, err)
	defer f.Close()
	_, err = d.Open(path, rw())
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	g, err := d.Open(path, rw())
	require.NoError(t, err)
	g.Close()
}

func TestEIOAtOffset(t *testing.T) {
	f, path := openWith(t, EIOAt(4096))
	_, err := f.WriteAt(make([]byte, 4096), 0)
	require.NoError(t, err, "[0, 4096) does not touch byte 4096")
	_, err = f.WriteAt(make([]byte, 10), 4097)
	require.NoError(t, err)
	n, err := f.WriteAt(make([]byte, 2), 4095)
	assert.Zero(t, n)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	_, err = f.WriteV([][]byte{make([]byte, 1)}, 4096)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	_, err = f.ReadAt(make([]byte, 5000), 0)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	_, err = f.ReadV([][]byte{make([]byte, 1), make([]byte, 1)}, 4095)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	_, err = f.ReadAt(make([]byte, 4096), 0)
	require.NoError(t, err)
	requireInjected(t, f.Allocate(4000, 100), syscall.EIO, ioerr.ErrIO)
	assert.Equal(t, int64(4107), fileSize(t, path))
}

func TestShortWrite(t *testing.T) {
	f, path := openWith(t, ShortWriteOnCall(2), Rule{Kind: ShortWrite, Call: 4, AndLater: true})
	_, err := f.WriteAt(make([]byte, 10), 0)
	require.NoError(t, err)
	n, err := f.WriteAt(make([]byte, 10), 10)
	assert.Equal(t, 5, n)
	require.Error(t, err, "a short write is never a success")
	assert.ErrorIs(t, err, io.ErrShortWrite)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	assert.Equal(t, int64(15), fileSize(t, path))
	_, err = f.WriteAt(make([]byte, 10), 0)
	require.NoError(t, err)
	// From the fourth write on, every write is short, even one byte (0 written).
	n, err = f.WriteV([][]byte{make([]byte, 3), make([]byte, 3)}, 100)
	assert.Equal(t, 3, n)
	assert.ErrorIs(t, err, io.ErrShortWrite)
	n, err = f.WriteAt([]byte{1}, 200)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.ErrShortWrite)
	assert.Equal(t, int64(103), fileSize(t, path))
}

func TestSlow(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	old := sleep
	sleep = func(d time.Duration) { mu.Lock(); slept = append(slept, d); mu.Unlock() }
	defer func() { sleep = old }()

	f, _ := openWith(t, SlowCalls(OpWrite, 50*time.Millisecond), SlowCalls(OpAny, time.Millisecond),
		SlowCalls(OpOpen, time.Second))
	assert.Equal(t, []time.Duration{time.Second}, slept)
	_, err := f.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	assert.Equal(t, []time.Duration{time.Second, 50 * time.Millisecond, time.Millisecond, time.Millisecond}, slept)
}

// Outside tests that replace it, the slow rules' sleep is time.Sleep.
func TestSlowReallySleeps(t *testing.T) {
	assert.Equal(t, reflect.ValueOf(time.Sleep).Pointer(), reflect.ValueOf(sleep).Pointer())
}

func TestInnerErrorsPassThrough(t *testing.T) {
	f, _ := openWith(t, NoSpaceAfter(100))
	_, err := f.WriteAt([]byte("x"), -1)
	require.Error(t, err)
	assert.False(t, IsInjected(err))
	_, err = New(ufs.New()).Open(filepath.Join(t.TempDir(), "missing"), driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.False(t, IsInjected(err))
}

func TestNewPanicsOnBadRule(t *testing.T) {
	assert.Panics(t, func() { New(ufs.New(), Rule{Kind: EIOCall, Op: OpWrite}) })
}

// The registered driver: faulty: prefixes and hint rules.

func hintOpts(params map[string]string) driver.OpenOptions {
	o := rw()
	o.Params = params
	return o
}

func TestResolvePrefix(t *testing.T) {
	d, rest, err := driver.Resolve("faulty:/tmp/f")
	require.NoError(t, err)
	assert.Equal(t, Name, d.Name())
	assert.Equal(t, "/tmp/f", rest)
	d, rest, err = driver.Resolve("faulty:sim:/tmp/f")
	require.NoError(t, err)
	assert.Equal(t, Name, d.Name())
	assert.Equal(t, "sim:/tmp/f", rest)
}

func TestHintRulesThroughResolve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d, rest, err := driver.Resolve("faulty:" + path)
	require.NoError(t, err)
	f, err := d.Open(rest, hintOpts(map[string]string{hints.CollioFault: "eio_call=write:2; enospc_after=8"}))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt(make([]byte, 4), 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 4), 4)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	n, err := f.WriteAt(make([]byte, 8), 4)
	assert.Equal(t, 4, n)
	requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
	assert.Equal(t, int64(8), fileSize(t, path))
	require.NoError(t, d.Delete(rest))
	assert.NoFileExists(t, path)
}

func TestFaultyOverSim(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	d, rest, err := driver.Resolve("faulty:sim:" + path)
	require.NoError(t, err)
	opts := hintOpts(map[string]string{
		hints.CollioFault:          "eio_offset=100",
		hints.CollioSimStripeCount: "3",
		hints.CollioSimLatency:     "0",
		hints.CollioSimBandwidth:   "0",
	})
	f, err := d.Open(rest, opts)
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 3}, f.Layout())
	_, err = f.WriteAt(make([]byte, 50), 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 50), 60)
	requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
	st, ok := sim.StatsOf(f)
	require.True(t, ok, "sim statistics are visible through the wrapper")
	assert.Equal(t, int64(1), st.Requests, "the failed write never reached sim")
	require.NoError(t, f.Close())
	assert.FileExists(t, filepath.Join(dir, ".f.sim"))
	require.NoError(t, d.Delete(rest))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "Delete goes through sim and removes its sidecars")
}

func TestFaultRanks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d, _ := driver.ByName(Name)
	for _, tc := range []struct {
		ranks, rank string
		faulty      bool
	}{
		{"", "", true},
		{"", "3", true},
		{"1,2", "2", true},
		{"1, 2", "1", true},
		{"1,2", "0", false},
		{"1,2", "", false}, // absent rank counts as 0
		{"0", "", true},
	} {
		params := map[string]string{hints.CollioFault: "eio_call=write:1", hints.CollioFaultRanks: tc.ranks}
		if tc.rank != "" {
			params[hints.CollioRank] = tc.rank
		}
		f, err := d.Open(path, hintOpts(params))
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("x"), 0)
		assert.Equal(t, tc.faulty, err != nil, "ranks %q rank %q: %v", tc.ranks, tc.rank, err)
		f.Close()
	}
}

// The fixed rules of New apply on every rank; the hint rules only on the
// listed ones.
func TestFixedRulesIgnoreRanks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d := New(ufs.New(), EIOOnCall(OpSync, 1))
	f, err := d.Open(path, hintOpts(map[string]string{
		hints.CollioFault: "eio_call=write:1", hints.CollioFaultRanks: "5", hints.CollioRank: "0"}))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
	requireInjected(t, f.Sync(), syscall.EIO, ioerr.ErrIO)
}

func TestBadHints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d, _ := driver.ByName(Name)
	for _, tc := range []struct {
		params map[string]string
		class  *ioerr.Class
		want   string
	}{
		{map[string]string{hints.CollioFault: "enospc_after=1;eio_call=wirte:3"}, ioerr.ErrBadHint, `"eio_call=wirte:3"`},
		{map[string]string{hints.CollioFault: "explode"}, ioerr.ErrBadHint, hints.CollioFault},
		{map[string]string{hints.CollioFaultRanks: "one"}, ioerr.ErrBadHint, hints.CollioFaultRanks},
		{map[string]string{hints.CollioRank: "x"}, ioerr.ErrArg, hints.CollioRank},
	} {
		_, err := d.Open(path, hintOpts(tc.params))
		require.Error(t, err)
		assert.Same(t, tc.class, ioerr.ClassOf(err), "%v", err)
		assert.ErrorIs(t, err, tc.class)
		assert.Contains(t, err.Error(), tc.want)
		assert.NoFileExists(t, path, "nothing is opened with a bad rule")
	}
}

func TestUnknownInnerPrefix(t *testing.T) {
	d, _ := driver.ByName(Name)
	_, err := d.Open("nosuchfs:/tmp/x", rw())
	var re *driver.ResolveError
	assert.True(t, errors.As(err, &re), "%v", err)
}
