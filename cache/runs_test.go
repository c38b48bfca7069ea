package cache

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/faulty"
	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/require"
)

// batchCounter is a decorator over ufs files that counts the batched
// writes and reads reaching them.
type batchCounter struct {
	inner               driver.Driver
	writeRuns, readRuns atomic.Int64
}

func (d *batchCounter) Name() string             { return "batchcounter" }
func (d *batchCounter) Delete(path string) error { return d.inner.Delete(path) }
func (d *batchCounter) Open(path string, o driver.OpenOptions) (driver.File, error) {
	f, err := d.inner.Open(path, o)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, d: d}, nil
}

type countedFile struct {
	driver.File
	d *batchCounter
}

func (f *countedFile) Unwrap() driver.File { return f.File }
func (f *countedFile) WriteRuns(runs []driver.Run) (int64, error) {
	f.d.writeRuns.Add(1)
	return driver.WriteRuns(f.File, runs)
}
func (f *countedFile) ReadRuns(runs []driver.Run) (int64, error) {
	f.d.readRuns.Add(1)
	return driver.ReadRuns(f.File, runs)
}

// randomRuns returns 1..8 runs of 1..3 buffers at random offsets in
// [0, span), overlapping each other at times, and writes them into m in
// order (later runs win).
func randomRuns(rng *rand.Rand, seed int, span int64, m *model) []driver.Run {
	runs := make([]driver.Run, 1+rng.IntN(8))
	for i := range runs {
		off, n := rng.Int64N(span), 1+rng.IntN(6<<10)
		data := pattern(seed*10+i, n)
		cut := rng.IntN(n + 1)
		runs[i] = driver.Run{Off: off, Bufs: [][]byte{data[:cut], data[cut:]}}
		m.write(data, off)
	}
	return runs
}

// Batches of runs through every policy, coherent or not: each batch is
// one batched write of the cache file, batched reads see every write, and
// after Close the global file is the model.
func TestWriteRunsBatchedIntoTheCache(t *testing.T) {
	for _, p := range []Policy{FlushImmediate, FlushOnClose, FlushNone} {
		for _, coherent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/coherent=%v", p, coherent), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "g")
				opts := newOpts(t, path, p, 2)
				opts.Coherent = coherent
				cacheDrv := &batchCounter{inner: ufs.New()}
				opts.CacheDriver = cacheDrv
				c, err := Open(openG(t, ufs.New(), path), opts)
				require.NoError(t, err)
				rng := rand.New(rand.NewPCG(uint64(p), 7))
				var m model
				const batches = 40
				for i := range batches {
					runs := randomRuns(rng, i, 64<<10, &m)
					var want int64
					for _, r := range runs {
						want += r.Len()
					}
					n, err := c.WriteRuns(runs)
					require.NoError(t, err)
					require.Equal(t, want, n)
					if i%5 == 0 {
						checkReadRuns(t, c, m, rng)
					}
					if i == batches/2 {
						require.NoError(t, c.Sync())
					}
				}
				require.Equal(t, int64(batches), cacheDrv.writeRuns.Load(), "one batched write of the cache file per batch")
				checkReadRuns(t, c, m, rng)
				require.NoError(t, c.Close())
				require.Equal(t, []byte(m), readOS(t, path))
				s, _ := StatsOf(c)
				require.False(t, s.Fallback)
			})
		}
	}
}

// checkReadRuns reads random runs, some past the end, with ReadRuns and
// compares them with m (zeros past its end).
func checkReadRuns(t *testing.T, f driver.File, m model, rng *rand.Rand) {
	t.Helper()
	runs := make([]driver.Run, 1+rng.IntN(6))
	for i := range runs {
		off, n := rng.Int64N(int64(len(m))+100), 1+rng.Int64N(8<<10)
		runs[i] = driver.Run{Off: off, Bufs: [][]byte{make([]byte, n/2), make([]byte, n-n/2)}}
	}
	_, err := driver.ReadRuns(f, runs)
	require.NoError(t, err)
	for _, r := range runs {
		want := make([]byte, r.Len())
		if r.Off < int64(len(m)) {
			copy(want, m[r.Off:])
		}
		require.Equal(t, want, append(append([]byte{}, r.Bufs[0]...), r.Bufs[1]...), "run at %d", r.Off)
	}
}

// When the cache file cannot take a batch, the rank falls back: that
// batch and every later one go to the global file as one batched call
// each, and the data is the same.
func TestWriteRunsFallBackStaysBatched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	opts := newOpts(t, path, FlushOnClose, 2)
	opts.CacheDriver = faulty.New(ufs.New(), faulty.NoSpaceAfter(20000))
	var warnings []string
	opts.Warn = func(s string) { warnings = append(warnings, s) }
	global := &batchCounter{inner: ufs.New()}
	c, err := Open(openG(t, global, path), opts)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	var m model
	const batches = 30
	fellAt := -1
	for i := range batches {
		runs := randomRuns(rng, i, 32<<10, &m)
		_, err := c.WriteRuns(runs)
		require.NoError(t, err)
		if fellAt < 0 && c.FellBack() {
			fellAt = i
		}
		checkReadRuns(t, c, m, rng)
	}
	require.Positive(t, fellAt, "the budget lets the first batch into the cache")
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0], "reserving space")
	require.NoError(t, c.Close())
	require.Equal(t, []byte(m), readOS(t, path))
	// The batch that caused the fallback and every later one went to the
	// global file whole; the cached ones before it went by copy.
	require.Equal(t, int64(batches-fellAt), global.writeRuns.Load())
}
