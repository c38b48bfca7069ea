package cache

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/faulty"
	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func openG(t *testing.T, drv driver.Driver, path string) driver.File {
	t.Helper()
	f, err := drv.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Perm: 0o644})
	require.NoError(t, err)
	return f
}

// model is what the file should hold.
type model []byte

func (m *model) write(p []byte, off int64) {
	for int64(len(*m)) < off+int64(len(p)) {
		*m = append(*m, 0)
	}
	copy((*m)[off:], p)
}

// put writes p at off through f and into m.
func (m *model) put(t *testing.T, f driver.File, p []byte, off int64) {
	t.Helper()
	_, err := f.WriteAt(p, off)
	require.NoError(t, err)
	m.write(p, off)
}

func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7 + i>>8)
	}
	return b
}

// checkRead reads [off, off+n) through f and compares with m, EOF included.
func checkRead(t *testing.T, f driver.File, m model, off, n int64) {
	t.Helper()
	got := make([]byte, n)
	k, err := f.ReadAt(got, off)
	want := int64(0)
	if off < int64(len(m)) {
		want = min(n, int64(len(m))-off)
	}
	require.Equal(t, int(want), k, "read [%d, %d)", off, off+n)
	if want < n {
		require.ErrorIs(t, err, io.EOF)
	} else {
		require.NoError(t, err)
	}
	if want > 0 {
		require.Equal(t, []byte(m[off:off+want]), got[:k], "read [%d, %d)", off, off+n)
	}
}

func newOpts(t *testing.T, path string, p Policy, threads int) Options {
	return Options{GlobalPath: path, Dir: t.TempDir(), Policy: p, Threads: threads, ChunkSize: 4096, Discard: true}
}

// Random overlapping writes through every policy and 1..4 workers: reads
// see every write at once, and after Close the global file is the model
// and the cache is gone.
func TestPoliciesMatchModel(t *testing.T) {
	for _, p := range []Policy{FlushImmediate, FlushOnClose, FlushNone} {
		for threads := 1; threads <= 4; threads++ {
			t.Run(fmt.Sprintf("%v/threads%d", p, threads), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "g")
				opts := newOpts(t, path, p, threads)
				c, err := Open(openG(t, ufs.New(), path), opts)
				require.NoError(t, err)
				rng := rand.New(rand.NewPCG(uint64(threads), uint64(p)))
				var m model
				for i := 0; i < 150; i++ {
					off, n := rng.Int64N(96<<10), 1+rng.IntN(12<<10)
					data := pattern(i, n)
					if i%3 == 0 {
						_, err = c.WriteV([][]byte{data[:n/3], data[n/3 : n/2], data[n/2:]}, off)
					} else {
						_, err = c.WriteAt(data, off)
					}
					require.NoError(t, err)
					m.write(data, off)
					if i%10 == 0 {
						checkRead(t, c, m, rng.Int64N(100<<10), 1+rng.Int64N(20<<10))
						size, err := c.Size()
						require.NoError(t, err)
						require.Equal(t, int64(len(m)), size)
					}
					if i == 75 {
						require.NoError(t, c.Sync())
						if p != FlushNone {
							require.Equal(t, []byte(m), readOS(t, path))
						}
					}
				}
				checkRead(t, c, m, 0, int64(len(m))+10)
				require.NoError(t, c.Close())
				require.Equal(t, []byte(m), readOS(t, path))
				require.Empty(t, dirEntries(t, opts.Dir))
				s, ok := StatsOf(c)
				require.True(t, ok)
				require.Positive(t, s.CopiedBytes)
				require.Equal(t, int64(0), s.CopyErrors)
			})
		}
	}
}

func readOS(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// Before any copy, reads of cached ranges come from the cache, holes
// below cached data read as zeros, and the size includes cached data.
func TestReadBeforeSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{'g'}, 50), 0o644))
	c, err := Open(openG(t, ufs.New(), path), newOpts(t, path, FlushOnClose, 2))
	require.NoError(t, err)
	data := pattern(1, 100)
	_, err = c.WriteAt(data, 100)
	require.NoError(t, err)
	require.Len(t, readOS(t, path), 50, "nothing copied before sync")
	got := make([]byte, 300)
	n, err := c.ReadAt(got, 0)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 200, n)
	want := append(append(bytes.Repeat([]byte{'g'}, 50), make([]byte, 50)...), data...)
	require.Equal(t, want, got[:n])
	n, err = c.ReadV([][]byte{got[:30], got[30:160]}, 40)
	require.NoError(t, err)
	require.Equal(t, 160, n)
	require.Equal(t, want[40:200], got[:160])
	size, err := c.Size()
	require.NoError(t, err)
	require.Equal(t, int64(200), size)
	require.NoError(t, c.Sync())
	require.Equal(t, want, readOS(t, path))
	require.NoError(t, c.Close())
}

// A copy error is returned by the next Sync, the extent is retried by the
// following one, and nothing is lost.
func TestCopyErrorReportedThenRetried(t *testing.T) {
	for _, p := range []Policy{FlushImmediate, FlushOnClose} {
		t.Run(p.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g")
			drv := faulty.New(ufs.New(), faulty.EIOOnCall(faulty.OpWrite, 2))
			c, err := Open(openG(t, drv, path), newOpts(t, path, p, 1))
			require.NoError(t, err)
			var m model
			for i := 0; i < 3; i++ {
				m.put(t, c, pattern(i, 1000), int64(i)*5000)
			}
			err = c.Sync()
			require.ErrorIs(t, err, syscall.EIO)
			var ce *CopyError
			require.ErrorAs(t, err, &ce)
			checkRead(t, c, m, 0, int64(len(m))) // still served from the cache
			require.NoError(t, c.Sync())
			require.Equal(t, []byte(m), readOS(t, path))
			require.NoError(t, c.Close())
		})
	}
}

// ENOSPC on the global file: Close fails, keeps the cache and journal,
// and Recover completes the global file once there is space.
func TestCloseErrorKeepsCacheForRecover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	drv := faulty.New(ufs.New(), faulty.NoSpaceAfter(3000))
	opts := newOpts(t, path, FlushOnClose, 3)
	c, err := Open(openG(t, drv, path), opts)
	require.NoError(t, err)
	var m model
	for i := 0; i < 8; i++ {
		m.put(t, c, pattern(i, 1000), int64(i)*1000)
	}
	err = c.Close()
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Contains(t, err.Error(), "collio recover")
	require.Len(t, dirEntries(t, opts.Dir), 2)
	require.NotEqual(t, []byte(m), readOS(t, path))

	res, err := Recover(opts.Dir, RecoverOptions{DryRun: true})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, "would copy", res[0].Status)
	res, err = Recover(opts.Dir, RecoverOptions{})
	require.NoError(t, err)
	require.Equal(t, "copied", res[0].Status, res[0].Err)
	require.Equal(t, []byte(m), readOS(t, path))
	require.Empty(t, dirEntries(t, opts.Dir))
}

// When space cannot be reserved in the cache, the rank writes through to
// the global file from then on, warns once, and the data is the same.
func TestReservationFailureWritesThrough(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushOnClose, 2)
	opts.CacheDriver = faulty.New(ufs.New(), faulty.NoSpaceAfter(5000))
	var warnings []string
	opts.Warn = func(s string) { warnings = append(warnings, s) }
	c, err := Open(openG(t, ufs.New(), path), opts)
	require.NoError(t, err)
	var m model
	for i := 0; i < 6; i++ {
		d := pattern(i, 2000)
		off := int64(i) * 1500 // overlapping: the direct write must win over the cached copy
		_, err := c.WriteAt(d, off)
		require.NoError(t, err)
		m.write(d, off)
		checkRead(t, c, m, 0, int64(len(m)))
	}
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "reserving space")
	require.NoError(t, c.Sync())
	require.NoError(t, c.Close())
	require.Equal(t, []byte(m), readOS(t, path))
	s, _ := StatsOf(c)
	require.True(t, s.Fallback)
}

// The journal lists the writes not synced yet; Sync empties it, Close
// removes it (discard) or keeps an empty one with the cache file.
func TestJournal(t *testing.T) {
	for _, discard := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "g")
		opts := newOpts(t, path, FlushOnClose, 1)
		opts.Discard = discard
		c, err := Open(openG(t, ufs.New(), path), opts)
		require.NoError(t, err)
		for i := 0; i < 3; i++ {
			_, err := c.WriteAt(pattern(i, 10), int64(i)*100)
			require.NoError(t, err)
		}
		info, err := readJournal(c.JournalPath())
		require.NoError(t, err)
		require.Len(t, info.Pending, 3)
		require.Equal(t, record{kind: kindWrite, seq: 2, off: 100, len: 10}, info.Pending[1])
		canon, _ := canonicalPath(path)
		require.Equal(t, canon, info.Global)
		require.NoError(t, c.Sync())
		info, err = readJournal(c.JournalPath())
		require.NoError(t, err)
		require.Empty(t, info.Pending)
		_, err = c.WriteAt(pattern(9, 10), 1000)
		require.NoError(t, err)
		require.NoError(t, c.Close())
		if discard {
			require.Empty(t, dirEntries(t, opts.Dir))
		} else {
			require.Len(t, dirEntries(t, opts.Dir), 2)
			info, err = readJournal(c.JournalPath())
			require.NoError(t, err)
			require.Empty(t, info.Pending)
		}
	}
}

// A journal left by an open that never closed is replayed by the next
// open of the same file on the same rank, before anything new is written.
func TestStaleJournalReplayedAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushOnClose, 1)
	g := openG(t, ufs.New(), path)
	c, err := Open(g, opts)
	require.NoError(t, err)
	d := pattern(3, 5000)
	_, err = c.WriteAt(d, 100)
	require.NoError(t, err)
	// Simulate the death of the process: drop the flock without closing.
	require.NoError(t, c.journal.f.Close())
	var warned []string
	opts.Warn = func(s string) { warned = append(warned, s) }
	c2, err := Open(openG(t, ufs.New(), path), opts)
	require.NoError(t, err)
	require.Len(t, warned, 1)
	require.Contains(t, warned[0], "earlier open")
	require.Equal(t, d, readOS(t, path)[100:])
	require.NoError(t, c2.Close())
}

// concurrency is a global file that counts concurrent writes and checks
// that overlapping ranges are never written at the same time.
type concurrency struct {
	driver.File
	mu      sync.Mutex
	active  []span
	max     int
	overlap bool
	delay   time.Duration
}

func (c *concurrency) WriteAt(p []byte, off int64) (int, error) {
	s := span{off, off + int64(len(p))}
	c.mu.Lock()
	for _, a := range c.active {
		c.overlap = c.overlap || a.overlaps(s)
	}
	c.active = append(c.active, s)
	c.max = max(c.max, len(c.active))
	c.mu.Unlock()
	time.Sleep(c.delay)
	n, err := c.File.WriteAt(p, off)
	c.mu.Lock()
	for i, a := range c.active {
		if a == s {
			c.active = append(c.active[:i], c.active[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	return n, err
}

// e10_cache_threads workers copy disjoint extents in parallel, never two
// overlapping ones at once.
func TestThreadsHonoured(t *testing.T) {
	for _, threads := range []int{1, 4} {
		path := filepath.Join(t.TempDir(), "g")
		g := &concurrency{File: openG(t, ufs.New(), path), delay: 5 * time.Millisecond}
		opts := newOpts(t, path, FlushOnClose, threads)
		c, err := Open(g, opts)
		require.NoError(t, err)
		var m model
		for i := 0; i < 24; i++ {
			d := pattern(i, 3000)
			off := int64(i%12) * 4000 // the second dozen overlaps the first
			if i >= 12 {
				off += 1000
			}
			_, err := c.WriteAt(d, off)
			require.NoError(t, err)
			m.write(d, off)
		}
		require.NoError(t, c.Close())
		require.Equal(t, []byte(m), readOS(t, path))
		require.False(t, g.overlap, "overlapping extents copied concurrently")
		if threads == 1 {
			require.Equal(t, 1, g.max)
		} else {
			require.Greater(t, g.max, 1)
			require.LessOrEqual(t, g.max, threads)
		}
	}
}

// workerStates returns the scheduler states of c's copy workers, from a
// dump of every goroutine ("sync.Cond.Wait", "running", ...).
func workerStates(c *File) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	mine := fmt.Sprintf("cache.(*File).worker(%p", c)
	var states []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, mine) {
			hdr, _, _ := strings.Cut(g, "\n") // goroutine N [state, ...]:
			_, state, _ := strings.Cut(hdr, "[")
			state, _, _ = strings.Cut(state, "]")
			state, _, _ = strings.Cut(state, ",")
			states = append(states, state)
		}
	}
	return states
}

// Idle workers sleep: an open cache with 4 workers and nothing to do has
// all of them parked in sync.Cond.Wait, dump after dump, instead of
// running.
func TestIdleWorkersDoNotSpin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	c, err := Open(openG(t, ufs.New(), path), newOpts(t, path, FlushImmediate, 4))
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(1, 100), 0)
	require.NoError(t, err)
	require.NoError(t, c.Sync())
	parked := []string{"sync.Cond.Wait", "sync.Cond.Wait", "sync.Cond.Wait", "sync.Cond.Wait"}
	// The worker that copied may still be on its way back to Wait.
	for i := 0; !slices.Equal(workerStates(c), parked); i++ {
		require.Less(t, i, 10000, "the workers never all waited: %v", workerStates(c))
		runtime.Gosched()
	}
	for range 50 {
		require.Equal(t, parked, workerStates(c))
		runtime.Gosched()
	}
	require.NoError(t, c.Close())
}

// Coherent mode: each written extent of the global file is locked from
// the cached write until its copy is done.
func TestCoherentLocksUntilCopied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushOnClose, 2) // coherent copies at once anyway
	opts.Coherent = true
	global := &gatedFile{File: openG(t, ufs.New(), path), open: make(chan struct{})}
	c, err := Open(global, opts) // no copy can finish until the gate opens
	require.NoError(t, err)
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer other.Close()
	lockedBy := func(off, n int64) bool {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Start: off, Len: n}
		require.NoError(t, unix.FcntlFlock(other.Fd(), unix.F_OFD_GETLK, &lk))
		return lk.Type != unix.F_UNLCK
	}
	_, err = c.WriteAt(pattern(1, 100), 0)
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(2, 100), 50)
	require.NoError(t, err)
	require.True(t, lockedBy(0, 10))
	require.True(t, lockedBy(140, 10))
	require.False(t, lockedBy(150, 10))
	// adio's own lock and unlock of an overlapping range (atomic mode)
	// must not release the cache's.
	require.NoError(t, c.Lock(100, 100, true))
	require.NoError(t, c.Unlock(100, 100))
	require.True(t, lockedBy(140, 10))
	close(global.open)
	require.NoError(t, c.Sync())
	require.False(t, lockedBy(0, 200))
	require.NoError(t, c.Close())
}

// gatedFile is a global file whose writes wait until open is closed.
type gatedFile struct {
	driver.File
	open chan struct{}
}

func (g *gatedFile) WriteAt(p []byte, off int64) (int, error) {
	<-g.open
	return g.File.WriteAt(p, off)
}

func (g *gatedFile) WriteV(b [][]byte, off int64) (int, error) {
	<-g.open
	return g.File.WriteV(b, off)
}

// Deferred close returns while no copy can reach the global file (its
// writes wait for a gate that opens only after Close returned);
// WaitPath waits for the copy and the data is complete after it.
func TestDeferredClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushOnClose, 1)
	opts.DeferredClose = true
	global := &gatedFile{File: openG(t, ufs.New(), path), open: make(chan struct{})}
	c, err := Open(global, opts)
	require.NoError(t, err)
	var m model
	for i := 0; i < 5; i++ {
		m.put(t, c, pattern(i, 100), int64(i)*1000)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(time.Minute): // a hang guard: no copy can finish before the gate opens
		close(global.open)
		t.Fatal("Close waited for the copy")
	}
	require.Empty(t, readOS(t, path), "nothing was copied before the gate opened")
	close(global.open)
	require.NoError(t, WaitPath("ufs:"+path)) // any prefix names the same file
	require.Equal(t, []byte(m), readOS(t, path))
	require.Empty(t, dirEntries(t, opts.Dir))
	require.NoError(t, WaitPath(path))
	require.NoError(t, WaitAll())
}

// A deferred close's error is reported once, by WaitAll.
func TestDeferredCloseError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushImmediate, 2)
	opts.DeferredClose = true
	c, err := Open(openG(t, faulty.New(ufs.New(), faulty.EIOFromCall(faulty.OpWrite, 1)), path), opts)
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(1, 100), 0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	err = WaitAll()
	require.ErrorIs(t, err, syscall.EIO)
	require.NoError(t, WaitAll())
	require.Len(t, dirEntries(t, opts.Dir), 2, "cache and journal kept for recovery")
}

// Truncate copies first, so no late copy extends the file again.
func TestTruncateAfterCachedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	c, err := Open(openG(t, ufs.New(), path), newOpts(t, path, FlushNone, 2))
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(1, 1000), 0)
	require.NoError(t, err)
	require.NoError(t, c.Truncate(300))
	require.NoError(t, c.Close())
	require.Equal(t, pattern(1, 1000)[:300], readOS(t, path))
}

// fullGlobal is a global file whose writes fail with ENOSPC while full;
// with hold set, a write that met the full disk reports it only once
// released, as a copy under way when space is freed does.
type fullGlobal struct {
	driver.File
	mu      sync.Mutex
	full    bool
	hold    bool
	entered chan struct{}
	release chan struct{}
}

func (g *fullGlobal) WriteAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	full, hold := g.full, g.hold
	g.hold = false
	g.mu.Unlock()
	if !full {
		return g.File.WriteAt(p, off)
	}
	if hold {
		close(g.entered)
		<-g.release
	}
	return 0, &os.PathError{Op: "write", Path: "g", Err: syscall.ENOSPC}
}

func (g *fullGlobal) WriteV(bufs [][]byte, off int64) (int, error) {
	return driver.WriteVAt(g, bufs, off)
}

// A Sync that meets ENOSPC puts the failed copies back in line at once
// (flush_immediate); space freed while such a retry is still under way
// must not fail the Close that follows: Close lets the retry end, then
// copies again. (e2e TestDiskFull's space-freed-before-close met this.)
func TestCloseRetriesCopiesThatFailedAfterItWasCalled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	g := &fullGlobal{File: openG(t, ufs.New(), path), full: true, entered: make(chan struct{}), release: make(chan struct{})}
	c, err := Open(g, newOpts(t, path, FlushImmediate, 1))
	require.NoError(t, err)
	var m model
	for i := 0; i < 3; i++ {
		m.put(t, c, pattern(i, 1000), int64(i)*5000)
	}
	c.Drain() // every first copy has failed
	g.mu.Lock()
	g.hold = true // the first retry, started by Sync, waits with its ENOSPC
	g.mu.Unlock()
	require.ErrorIs(t, c.Sync(), syscall.ENOSPC)
	<-g.entered
	g.mu.Lock()
	g.full = false // space freed while that retry is under way
	g.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	time.Sleep(50 * time.Millisecond) // Close is waiting by now
	close(g.release)
	require.NoError(t, <-closed)
	require.Equal(t, []byte(m), readOS(t, path))
}

// Copies that landed stay unsynced (another node's client may not see
// them) until the global file is synced, by SyncCopies or a Sync; writes
// through after a fallback count too.
func TestUnsyncedUntilSynced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	c, err := Open(openG(t, ufs.New(), path), newOpts(t, path, FlushImmediate, 2))
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(1, 1000), 3000)
	require.NoError(t, err)
	_, err = c.WriteAt(pattern(2, 500), 8000)
	require.NoError(t, err)
	c.Drain()
	s, e := c.Pending()
	require.Equal(t, s, e, "every copy landed")
	s, e = c.Unsynced()
	require.Equal(t, [2]int64{3000, 8500}, [2]int64{s, e})
	require.NoError(t, c.SyncCopies())
	s, e = c.Unsynced()
	require.Equal(t, s, e)

	c.FallBack()
	_, err = c.WriteAt(pattern(3, 100), 100)
	require.NoError(t, err)
	s, e = c.Unsynced()
	require.Equal(t, [2]int64{100, 200}, [2]int64{s, e})
	require.NoError(t, c.Sync())
	s, e = c.Unsynced()
	require.Equal(t, s, e)
	require.NoError(t, c.Close())
}
