package sim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Small, fast parameters for the write-pattern tests: 4 targets of 64 KiB
// stripes, a stripe takes 1 ms to transfer, 100 us latency, 2 ms per lock
// revocation.
var patternParams = map[string]string{
	hints.CollioSimStripeSize:  "65536",
	hints.CollioSimStripeCount: "4",
	hints.CollioSimBandwidth:   "65536000",
	hints.CollioSimLatency:     "100",
	hints.CollioSimLockLatency: "2000",
}

const (
	patStripe  = 64 << 10
	patStripes = 32
)

// write is one writer's request.
type write struct {
	writer int // 0 = A, 1 = B
	off    int64
	n      int
}

// alignedWrites: A owns stripes 0, 2, 4..., B owns 1, 3, 5..., whole
// stripes each, in file order.
func alignedWrites() []write {
	var w []write
	for s := 0; s < patStripes; s++ {
		w = append(w, write{s % 2, int64(s) * patStripe, patStripe})
	}
	return w
}

// misalignedWrites: every stripe is half A's (first half), half B's.
func misalignedWrites() []write {
	var w []write
	for s := 0; s < patStripes; s++ {
		w = append(w, write{0, int64(s) * patStripe, patStripe / 2})
		w = append(w, write{1, int64(s)*patStripe + patStripe/2, patStripe / 2})
	}
	return w
}

// openWriters creates a sim file with patternParams and opens it twice.
func openWriters(t *testing.T, d driver.Driver) (path string, files [2]driver.File) {
	path = filepath.Join(t.TempDir(), "f")
	files[0] = open(t, d, path, create(patternParams))
	files[1] = open(t, d, path, driver.OpenOptions{Flags: driver.ORdWr})
	return path, files
}

// verify checks that the file holds what the writes wrote.
func verify(t *testing.T, f driver.File, writes []write) {
	t.Helper()
	for _, w := range writes {
		got := make([]byte, w.n)
		_, err := f.ReadAt(got, w.off)
		require.NoError(t, err)
		require.Equal(t, pattern(w.n, byte(w.off)+byte(w.writer)), got, "writer %d at %d", w.writer, w.off)
	}
}

// With a fake clock and the two writers taking turns, the model's costs
// are exact: aligned writes never move a lock, misaligned ones move the
// lock of every stripe from A to B.
func TestPatternCostsExact(t *testing.T) {
	for _, tc := range []struct {
		name        string
		writes      []write
		revocations int64
		elapsed     time.Duration
	}{
		// 32 stripes, each 100 us + 1 ms.
		{"aligned", alignedWrites(), 0, 32 * 1100 * time.Microsecond},
		// 64 half stripes, each 100 us + 0.5 ms, plus 32 revocations.
		{"misaligned", misalignedWrites(), 32, 64*600*time.Microsecond + 32*2*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewFakeClock(int64(time.Hour))
			_, files := openWriters(t, NewWithClock(clock))
			start := clock.Now()
			for _, w := range tc.writes {
				_, err := files[w.writer].WriteAt(pattern(w.n, byte(w.off)+byte(w.writer)), w.off)
				require.NoError(t, err)
			}
			assert.Equal(t, tc.elapsed, time.Duration(clock.Now()-start))
			a, _ := StatsOf(files[0])
			b, _ := StatsOf(files[1])
			assert.Equal(t, tc.revocations, a.Revocations+b.Revocations)
			assert.Equal(t, tc.revocations, a.AllRevocations)
			assert.Equal(t, int64(patStripes*patStripe), a.Bytes+b.Bytes)
			verify(t, files[0], tc.writes)
		})
	}
}

// runConcurrently has each writer issue its own writes, in order, in its
// own goroutine (as two aggregators would), and returns the wall time.
func runConcurrently(t *testing.T, files [2]driver.File, writes []write) time.Duration {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := time.Now()
	for i := range files {
		wg.Go(func() {
			for _, w := range writes {
				if w.writer != i {
					continue
				}
				if _, err := files[i].WriteAt(pattern(w.n, byte(w.off)+byte(w.writer)), w.off); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	return elapsed
}

// The same patterns with the real clock and the two writers running at
// once, as two aggregators do: the data is right and the lock traffic is
// the model's (none aligned, every stripe's lock moved misaligned). The
// costs themselves are checked exactly, on a fake clock, by
// TestPatternCostsExact; the wall times are only logged, as the machine's
// load moves them.
func TestPatternsConcurrentRealClock(t *testing.T) {
	d := New()
	_, aligned := openWriters(t, d)
	tAligned := runConcurrently(t, aligned, alignedWrites())
	sa, _ := StatsOf(aligned[0])
	verify(t, aligned[0], alignedWrites())

	_, misaligned := openWriters(t, d)
	tMisaligned := runConcurrently(t, misaligned, misalignedWrites())
	sm, _ := StatsOf(misaligned[0])
	verify(t, misaligned[0], misalignedWrites())

	t.Logf("2 writers, %d stripes of %d KiB on 4 targets: aligned %v (%d lock revocations), misaligned %v (%d)",
		patStripes, patStripe>>10, tAligned, sa.AllRevocations, tMisaligned, sm.AllRevocations)
	assert.Zero(t, sa.AllRevocations)
	assert.Equal(t, int64(patStripes), sm.AllRevocations)
}

// Many goroutines on many opens of one file: the data is right and the
// shared state survives (run with -race).
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d := NewWithClock(NewFakeClock(0))
	open(t, d, path, create(map[string]string{hints.CollioSimStripeSize: "4096"}))
	const writers, per = 8, 16
	var wg sync.WaitGroup
	for w := range writers {
		f := open(t, d, path, driver.OpenOptions{Flags: driver.ORdWr})
		wg.Go(func() {
			for i := range per {
				off := int64(i*writers+w) * 1000 // 1000-byte pieces share stripes
				if _, err := f.WriteAt(pattern(1000, byte(w)), off); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	f := open(t, d, path, driver.OpenOptions{Flags: driver.ORdOnly})
	for i := range writers * per {
		got := make([]byte, 1000)
		_, err := f.ReadAt(got, int64(i)*1000)
		require.NoError(t, err)
		require.Equal(t, pattern(1000, byte(i%writers)), got)
	}
	s, _ := StatsOf(f)
	assert.Positive(t, s.AllRevocations)
}

// The shared state is shared between processes: a child process writes
// stripe 0, and this process then has to take the lock from it.
func TestStateSharedAcrossProcesses(t *testing.T) {
	if path := os.Getenv("COLLIO_SIM_CHILD_PATH"); path != "" {
		f, err := New().Open(path, driver.OpenOptions{Flags: driver.ORdWr})
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("child"), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		fmt.Println("child pid", os.Getpid())
		return
	}
	path := filepath.Join(t.TempDir(), "f")
	params := map[string]string{hints.CollioSimBandwidth: "0", hints.CollioSimLatency: "0", hints.CollioSimLockLatency: "0"}
	f := open(t, New(), path, create(params))

	cmd := exec.Command(os.Args[0], "-test.run=^TestStateSharedAcrossProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), "COLLIO_SIM_CHILD_PATH="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	st := f.(*file).st
	require.True(t, st.lock())
	owner := st.load(st.slotIndex(0) + 1)
	st.unlock()
	assert.Contains(t, string(out), "child pid "+strconv.FormatInt(owner>>20, 10), "the lock of stripe 0 is the child's")
	assert.NotEqual(t, int64(os.Getpid()), owner>>20)

	_, err = f.WriteAt([]byte("parent"), 0)
	require.NoError(t, err)
	s, _ := StatsOf(f)
	assert.Equal(t, int64(1), s.Revocations)
	assert.Equal(t, int64(1), s.AllRevocations)
}
