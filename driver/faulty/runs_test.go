package faulty

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingDriver opens ufs files that count the calls that reach them.
type countingDriver struct{ calls *callCounts }

type callCounts struct {
	writeRuns, readRuns int // batched calls
	runs                int // runs in them
	single              int // WriteAt, WriteV, ReadAt, ReadV
}

func (d countingDriver) Name() string { return "counting" }
func (d countingDriver) Delete(p string) error {
	return ufs.New().Delete(p)
}
func (d countingDriver) Open(p string, o driver.OpenOptions) (driver.File, error) {
	f, err := ufs.New().Open(p, o)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, c: d.calls}, nil
}

type countingFile struct {
	driver.File
	c *callCounts
}

func (f *countingFile) WriteRuns(runs []driver.Run) (int64, error) {
	f.c.writeRuns++
	f.c.runs += len(runs)
	return driver.WriteRuns(f.File, runs)
}

func (f *countingFile) ReadRuns(runs []driver.Run) (int64, error) {
	f.c.readRuns++
	f.c.runs += len(runs)
	return driver.ReadRuns(f.File, runs)
}

func (f *countingFile) WriteAt(p []byte, off int64) (int, error) {
	f.c.single++
	return f.File.WriteAt(p, off)
}

func (f *countingFile) WriteV(b [][]byte, off int64) (int, error) {
	f.c.single++
	return f.File.WriteV(b, off)
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.c.single++
	return f.File.ReadAt(p, off)
}

func (f *countingFile) ReadV(b [][]byte, off int64) (int, error) {
	f.c.single++
	return f.File.ReadV(b, off)
}

// openCounting opens a fresh file through New(counting ufs, rules...).
func openCounting(t *testing.T, rules ...Rule) (driver.File, *callCounts, string) {
	t.Helper()
	c := &callCounts{}
	path := filepath.Join(t.TempDir(), "f")
	f, err := New(countingDriver{c}, rules...).Open(path, rw())
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, c, path
}

// tenRuns are ten runs of 10, 11, ..., 19 bytes, every other 100 bytes,
// each of two buffers; byte values say which run they belong to.
func tenRuns() []driver.Run {
	var runs []driver.Run
	for i := range 10 {
		n := 10 + i
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + i)
		}
		runs = append(runs, driver.Run{Off: int64(200 * i), Bufs: [][]byte{b[:n/2], b[n/2:]}})
	}
	return runs
}

// lenBefore is the byte count of runs[:k].
func lenBefore(runs []driver.Run, k int) int64 {
	var n int64
	for _, r := range runs[:k] {
		n += r.Len()
	}
	return n
}

// fileHas checks the file holds exactly runs[:k] followed by a prefix of
// extra bytes of run k.
func fileHas(t *testing.T, path string, runs []driver.Run, k int, extra int64) {
	t.Helper()
	var want []byte
	put := func(off int64, b []byte) {
		if end := off + int64(len(b)); end > int64(len(want)) {
			want = append(want, make([]byte, end-int64(len(want)))...)
		}
		copy(want[off:], b)
	}
	for _, r := range runs[:k] {
		pos := r.Off
		for _, b := range r.Bufs {
			put(pos, b)
			pos += int64(len(b))
		}
	}
	if extra > 0 {
		pos := runs[k].Off
		for _, b := range runs[k].Bufs {
			take := min(int64(len(b)), extra)
			put(pos, b[:take])
			pos, extra = pos+take, extra-take
		}
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestWriteRunsStaysBatched(t *testing.T) {
	f, c, path := openCounting(t)
	runs := tenRuns()
	n, err := driver.WriteRuns(f, runs)
	require.NoError(t, err)
	assert.Equal(t, lenBefore(runs, 10), n)
	assert.Equal(t, callCounts{writeRuns: 1, runs: 10}, *c, "one batch reaches the inner file")
	fileHas(t, path, runs, 10, 0)

	back := tenRuns()
	for _, r := range back {
		for _, b := range r.Bufs {
			clear(b)
		}
	}
	back = append(back, driver.Run{Off: 5000, Bufs: [][]byte{{9, 9, 9}}}) // past the end: zeros
	n, err = driver.ReadRuns(f, back)
	require.NoError(t, err)
	assert.Equal(t, lenBefore(runs, 10), n)
	assert.Equal(t, runs, back[:10])
	assert.Equal(t, []byte{0, 0, 0}, back[10].Bufs[0])
	assert.Equal(t, callCounts{writeRuns: 1, readRuns: 1, runs: 21}, *c)
}

// An injected fault inside a batch stops it there: the runs before it
// reach the inner file as one batch, the count is exactly theirs, and the
// fault is the error.
func TestFaultsFireInsideBatches(t *testing.T) {
	runs := tenRuns()
	t.Run("eio_call", func(t *testing.T) {
		f, c, path := openCounting(t, EIOOnCall(OpWrite, 4))
		n, err := driver.WriteRuns(f, runs)
		requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
		assert.Contains(t, err.Error(), "eio_call=write:4")
		assert.Equal(t, lenBefore(runs, 3), n)
		assert.Equal(t, callCounts{writeRuns: 1, runs: 3}, *c)
		fileHas(t, path, runs, 3, 0)
		// The count goes on from there: the next batch's runs are calls 11 on.
		n, err = driver.WriteRuns(f, runs)
		require.NoError(t, err)
		assert.Equal(t, lenBefore(runs, 10), n)
	})
	t.Run("eio_offset", func(t *testing.T) {
		f, c, path := openCounting(t, EIOAt(int64(200*6+3)))
		n, err := driver.WriteRuns(f, runs)
		requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
		assert.Equal(t, lenBefore(runs, 6), n)
		assert.Equal(t, callCounts{writeRuns: 1, runs: 6}, *c)
		fileHas(t, path, runs, 6, 0)
	})
	t.Run("short_write", func(t *testing.T) {
		f, c, path := openCounting(t, ShortWriteOnCall(5))
		n, err := driver.WriteRuns(f, runs)
		assert.ErrorIs(t, err, io.ErrShortWrite)
		requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
		half := runs[4].Len() / 2
		assert.Equal(t, lenBefore(runs, 4)+half, n)
		assert.Equal(t, callCounts{writeRuns: 1, runs: 4, single: 1}, *c)
		fileHas(t, path, runs, 4, half)
	})
	t.Run("enospc", func(t *testing.T) {
		budget := lenBefore(runs, 7) + 3
		f, c, path := openCounting(t, NoSpaceAfter(budget))
		n, err := driver.WriteRuns(f, runs)
		requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
		assert.Equal(t, budget, n)
		assert.Equal(t, callCounts{writeRuns: 1, runs: 7, single: 1}, *c)
		fileHas(t, path, runs, 7, 3)
		// The budget is spent exactly: not one more byte fits.
		k, err := f.WriteAt([]byte{1}, 0)
		assert.Zero(t, k)
		requireInjected(t, err, syscall.ENOSPC, ioerr.ErrNoSpace)
	})
	t.Run("read", func(t *testing.T) {
		f, c, _ := openCounting(t, EIOOnCall(OpRead, 3))
		_, err := driver.WriteRuns(f, runs)
		require.NoError(t, err)
		back := tenRuns()
		n, err := driver.ReadRuns(f, back)
		requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
		assert.Equal(t, lenBefore(runs, 2), n)
		assert.Equal(t, callCounts{writeRuns: 1, readRuns: 1, runs: 12}, *c)
	})
	t.Run("first run", func(t *testing.T) {
		f, c, path := openCounting(t, EIOOnCall(OpWrite, 1))
		n, err := driver.WriteRuns(f, runs)
		requireInjected(t, err, syscall.EIO, ioerr.ErrIO)
		assert.Zero(t, n)
		assert.Equal(t, callCounts{}, *c, "nothing reaches the inner file")
		assert.Zero(t, fileSize(t, path))
	})
}
