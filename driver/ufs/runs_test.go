package ufs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// someRuns returns n runs of varied shapes at increasing offsets with
// gaps: some empty, some of more than iovMax buffers.
func someRuns(rng *rand.Rand, n int) []driver.Run {
	runs := make([]driver.Run, n)
	off := int64(rng.IntN(100))
	for i := range runs {
		k := rng.IntN(6)
		switch {
		case i%17 == 3:
			k = 0
		case i%29 == 5:
			k = 2*iovMax + rng.IntN(300) // a fifth are empty: still two calls
		}
		runs[i] = driver.Run{Off: off, Bufs: manyBuffers(k, byte(i))}
		off += runs[i].Len() + int64(rng.IntN(50))
	}
	return runs
}

// runByRun writes the runs with WriteV, the reference.
func runByRun(t *testing.T, runs []driver.Run) []byte {
	t.Helper()
	f, path := openNew(t)
	for _, r := range runs {
		_, err := f.WriteV(r.Bufs, r.Off)
		require.NoError(t, err)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestWriteRunsMatchesWriteV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Batches of one run, several, and more buffers than one batch takes.
	for _, n := range []int{1, 7, 300} {
		runs := someRuns(rng, n)
		f, path := openNew(t)
		require.False(t, f.memory, "the temp dir must not be in memory for this test")
		total, err := f.WriteRuns(runs)
		require.NoError(t, err)
		want := int64(0)
		for _, r := range runs {
			want += r.Len()
		}
		assert.Equal(t, want, total, "bytes written, %d runs", n)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(runByRun(t, runs), got), "file as run-by-run writes left it, %d runs", n)
	}
}

func TestWriteRunsLaterRunsWin(t *testing.T) {
	f, path := openNew(t)
	_, err := f.WriteRuns([]driver.Run{
		{Off: 0, Bufs: [][]byte{[]byte("aaaa")}},
		{Off: 2, Bufs: [][]byte{[]byte("b"), []byte("c")}},
	})
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, "aabc", string(got))
}

// limitFileSize lowers RLIMIT_FSIZE for the rest of the test: writes
// beyond it are short, then fail with EFBIG (Go ignores SIGXFSZ).
func limitFileSize(t *testing.T, n uint64) {
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_FSIZE, &old))
	lim := old
	lim.Cur = n
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_FSIZE, &lim))
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_FSIZE, &old) })
}

func TestWriteRunsStopsAtTheFirstFailure(t *testing.T) {
	runs := []driver.Run{
		{Off: 0, Bufs: [][]byte{pattern(100, 1)}},
		{Off: 200, Bufs: [][]byte{pattern(60, 2), pattern(60, 3)}}, // crosses the limit at 250
		{Off: 400, Bufs: [][]byte{pattern(10, 4)}},
	}
	f, path := openNew(t)
	limitFileSize(t, 250)
	total, err := f.WriteRuns(runs)
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.EFBIG), "the file system's error: %v", err)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, path, pe.Path)
	assert.Equal(t, int64(150), total, "the first run and the part of the second below the limit")
	got, _ := os.ReadFile(path)
	want := append(append(pattern(100, 1), make([]byte, 100)...), pattern(50, 2)...)
	assert.Equal(t, want, got)

	// A batch whose first call fails moves nothing.
	g, _ := openNew(t)
	total, err = g.WriteRuns([]driver.Run{{Off: 300, Bufs: [][]byte{pattern(5, 1)}}, runs[0]})
	assert.True(t, errors.Is(err, syscall.EFBIG), "%v", err)
	assert.Zero(t, total)
}

func TestWriteRunsBadFile(t *testing.T) {
	_, path := openNew(t)
	ro := openPath(t, path, driver.ORdOnly)
	_, err := ro.WriteRuns([]driver.Run{{Off: 0, Bufs: [][]byte{pattern(5, 1)}}})
	assert.True(t, errors.Is(err, syscall.EBADF), "%v", err)

	f, _ := openNew(t)
	require.NoError(t, f.Close())
	_, err = f.WriteRuns([]driver.Run{{Off: 0, Bufs: [][]byte{pattern(5, 1)}}})
	assert.True(t, errors.Is(err, fs.ErrClosed), "%v", err)
}

// Files in memory are batched too; the file is the same as run-by-run
// writes leave it, and reads return it.
func TestWriteRunsInMemory(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "collio-runs")
	if err != nil {
		t.Skip("no /dev/shm here:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "f")
	f := openPath(t, path, driver.ORdWr|driver.OCreate)
	require.True(t, f.memory)
	runs := someRuns(rand.New(rand.NewPCG(3, 4)), 40)
	_, err = f.WriteRuns(runs)
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	assert.True(t, bytes.Equal(runByRun(t, runs), got))

	back := sameRuns(runs)
	_, err = f.ReadRuns(back)
	require.NoError(t, err)
	for i, r := range back {
		if r.Len() == 0 {
			continue // may lie past the end of the file
		}
		require.True(t, bytes.Equal(got[r.Off:r.Off+r.Len()], bytes.Join(r.Bufs, nil)), "run %d", i)
	}
}

// prefix returns the first n bytes of a buffer list, as a list.
func prefix(bufs [][]byte, n int64) [][]byte {
	var out [][]byte
	for _, b := range bufs {
		if n == 0 {
			break
		}
		k := min(int64(len(b)), n)
		out = append(out, b[:k])
		n -= k
	}
	return out
}

// sameRuns returns runs of the same shape with fresh (garbage) buffers.
func sameRuns(runs []driver.Run) []driver.Run {
	out := make([]driver.Run, len(runs))
	for i, r := range runs {
		out[i] = driver.Run{Off: r.Off, Bufs: sameShape(r.Bufs)}
		for _, b := range out[i].Bufs {
			for k := range b {
				b[k] = 0xee
			}
		}
	}
	return out
}

func TestReadRunsMatchesTheFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 300} {
		runs := someRuns(rng, n)
		f, path := openNew(t)
		_, err := f.WriteRuns(runs)
		require.NoError(t, err)
		content, err := os.ReadFile(path)
		require.NoError(t, err)

		// The same runs and, past end of file, runs that read zeros: one
		// across the end in the middle of the batch, one beyond it last.
		size := int64(len(content))
		across := driver.Run{Off: size - 3, Bufs: [][]byte{make([]byte, 2), make([]byte, 5)}}
		runs = slices.Insert(runs, len(runs)/2, across)
		runs = append(runs, driver.Run{Off: size + 100, Bufs: [][]byte{make([]byte, 4)}})
		back := sameRuns(runs)
		total, err := f.ReadRuns(back)
		require.NoError(t, err)
		fromFile := int64(0)
		for i, r := range back {
			flat := bytes.Join(r.Bufs, nil)
			want := make([]byte, len(flat))
			if r.Off < size {
				k := copy(want, content[r.Off:])
				fromFile += int64(k)
			}
			require.True(t, bytes.Equal(want, flat), "run %d of %d at %d (file size %d)", i, len(runs), r.Off, size)
		}
		assert.Equal(t, fromFile, total, "bytes that came from the file")
	}
}

func TestReadRunsBadFile(t *testing.T) {
	_, path := openNew(t)
	wo := openPath(t, path, driver.OWrOnly)
	_, err := wo.ReadRuns([]driver.Run{{Off: 0, Bufs: [][]byte{make([]byte, 5)}}})
	assert.True(t, errors.Is(err, syscall.EBADF), "%v", err)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "preadv", pe.Op)

	f, _ := openNew(t)
	require.NoError(t, f.Close())
	_, err = f.ReadRuns([]driver.Run{{Off: 0, Bufs: [][]byte{make([]byte, 5)}}})
	assert.True(t, errors.Is(err, fs.ErrClosed), "%v", err)
}

func flatten(runs []driver.Run) [][]byte {
	var out [][]byte
	for _, r := range runs {
		out = append(out, r.Bufs...)
	}
	return out
}
