package ufs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestRegisteredUnderUFS(t *testing.T) {
	d, ok := driver.ByName("ufs")
	require.True(t, ok)
	assert.Equal(t, "ufs", d.Name())

	d, path, err := driver.Resolve("ufs:/tmp/x")
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
	assert.Equal(t, "/tmp/x", path)

	d, path, err = driver.Resolve(filepath.Join(t.TempDir(), "new"))
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name(), "a local file system resolves to ufs")
	assert.NotEmpty(t, path)
}

func TestOpenCreatesWithDefaultPerm(t *testing.T) {
	_, path := openNew(t)
	info, err := os.Stat(path)
	require.NoError(t, err)
	// The umask may clear bits but never adds any.
	assert.Zero(t, info.Mode().Perm()&^0o644)
	assert.NotZero(t, info.Mode().Perm()&0o600)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	d := New()

	_, err := d.Open(filepath.Join(dir, "missing"), driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *os.PathError
	assert.ErrorAs(t, err, &pe, "errors keep the *os.PathError")

	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.WriteFile(existing, []byte("x"), 0o644))
	_, err = d.Open(existing, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl})
	assert.ErrorIs(t, err, fs.ErrExist)

	_, err = d.Open(filepath.Join(existing, "below"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
	assert.ErrorIs(t, err, syscall.ENOTDIR)

	_, err = d.Open(dir, driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, syscall.EISDIR, "a directory is not an MPI file")
}

func TestDelete(t *testing.T) {
	f, path := openNew(t)
	require.NoError(t, f.Close())
	require.NoError(t, New().Delete(path))
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorIs(t, New().Delete(path), fs.ErrNotExist)
}

func TestWriteAtReadAtRoundTrip(t *testing.T) {
	f, _ := openNew(t)
	data := pattern(3<<20+17, 1)
	n, err := f.WriteAt(data, 4096)
	require.NoError(t, err)
	assert.Equal(t, len(data), n)

	got := make([]byte, len(data))
	n, err = f.ReadAt(got, 4096)
	require.NoError(t, err)
	assert.Equal(t, len(data), n)
	assert.Equal(t, data, got)

	hole := make([]byte, 4096)
	_, err = f.ReadAt(hole, 0)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 4096), hole, "the gap before the data reads as zeros")
}

func TestReadAtEOF(t *testing.T) {
	f, _ := openNew(t)
	_, err := f.WriteAt([]byte("hello"), 0)
	require.NoError(t, err)

	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 2)
	assert.Equal(t, 3, n)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, "llo", string(buf[:n]))

	n, err = f.ReadAt(buf, 100)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)

	n, err = f.ReadAt(nil, 100)
	assert.Equal(t, 0, n)
	assert.NoError(t, err, "an empty read is not EOF")
}

func TestNegativeOffsetsAreRejected(t *testing.T) {
	f, _ := openNew(t)
	_, err := f.WriteAt([]byte("x"), -1)
	assert.ErrorIs(t, err, syscall.EINVAL)
	_, err = f.ReadAt(make([]byte, 1), -1)
	assert.ErrorIs(t, err, syscall.EINVAL)
	_, err = f.WriteV([][]byte{{1}}, -1)
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.ErrorIs(t, f.Truncate(-1), syscall.EINVAL)
	assert.ErrorIs(t, f.Allocate(-1, 10), syscall.EINVAL)
	assert.ErrorIs(t, f.Lock(0, -1, true), syscall.EINVAL)
}

func TestTruncateSizeSync(t *testing.T) {
	f, _ := openNew(t)
	size, err := f.Size()
	require.NoError(t, err)
	assert.Zero(t, size)

	_, err = f.WriteAt(pattern(1000, 3), 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(10))
	size, err = f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(10), size)

	require.NoError(t, f.Truncate(1<<20))
	size, err = f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), size)
	got := make([]byte, 20)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	assert.Equal(t, append(pattern(10, 3), make([]byte, 10)...), got)

	assert.NoError(t, f.Sync())
}

func TestLayoutIsUnstriped(t *testing.T) {
	f, _ := openNew(t)
	assert.Equal(t, driver.Layout{StripeSize: 0, StripeCount: 1, StartTarget: -1}, f.Layout())
}

func TestUseAfterClose(t *testing.T) {
	f, _ := openNew(t)
	require.NoError(t, f.Close())
	_, err := f.WriteAt([]byte("x"), 0)
	assert.ErrorIs(t, err, fs.ErrClosed)
	_, err = f.Size()
	assert.ErrorIs(t, err, fs.ErrClosed)
	assert.ErrorIs(t, f.Lock(0, 0, true), fs.ErrClosed)
	assert.True(t, errors.Is(f.Close(), fs.ErrClosed))
}

func TestConcurrentWritersOnOneFile(t *testing.T) {
	f, _ := openNew(t)
	const writers, block = 8, 64 << 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.WriteAt(pattern(block, byte(w)), int64(w*block))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	for w := range writers {
		got := make([]byte, block)
		_, err := f.ReadAt(got, int64(w*block))
		require.NoError(t, err)
		assert.Equal(t, pattern(block, byte(w)), got, "writer %d", w)
	}
}

// fdPath is where /proc says descriptor fd points, "" when it is closed.
func fdPath(fd int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return ""
	}
	return p
}

func TestFromFDUsesTheGivenDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	require.NoError(t, err)
	f, err := FromFD(fd, path, driver.OpenOptions{Flags: driver.ORdWr})
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("through fd"), 3)
	require.NoError(t, err)
	// The bytes went through fd itself: read them back on it.
	got := make([]byte, 10)
	_, err = unix.Pread(fd, got, 3)
	require.NoError(t, err)
	assert.Equal(t, "through fd", string(got))
	assert.Equal(t, path, fdPath(fd))
	require.NoError(t, f.Close())
	assert.NotEqual(t, path, fdPath(fd), "Close closes the descriptor handed over")
}

func TestFromFDRefusesADirectoryAndClosesIt(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	_, err = FromFD(fd, dir, driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, syscall.EISDIR)
	assert.NotEqual(t, dir, fdPath(fd), "a refused descriptor is closed, not leaked")
}

// DropCached forgets the clean cached pages of a range (and of the whole
// file with length 0) without touching its bytes; a closed file says so.
func TestDropCachedKeepsTheBytes(t *testing.T) {
	f, _ := openNew(t)
	data := pattern(1<<20, 7)
	_, err := f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	d, ok := driver.As[driver.CacheDropper](f)
	require.True(t, ok, "ufs files drop their cached pages")
	require.NoError(t, d.DropCached(4096, 65536))
	require.NoError(t, d.DropCached(0, 0))
	got := make([]byte, len(data))
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	require.NoError(t, f.Close())
	assert.ErrorContains(t, d.DropCached(0, 0), "fadvise")
}

// Sync calls fsync only when something was written through the file since
// the last one (write, vector write, runs, truncate, allocate), keeps it
// owed when fsync fails, and always calls it once the descriptor was
// handed out raw; on a closed file it still fails.
func TestSyncOnlyAfterWrites(t *testing.T) {
	calls := 0
	fail := false
	saved := fsync
	fsync = func(fd int) error {
		calls++
		if fail {
			return unix.EIO
		}
		return saved(fd)
	}
	defer func() { fsync = saved }()
	f, _ := openNew(t)
	expect := func(want int, what string) {
		t.Helper()
		calls = 0
		require.NoError(t, f.Sync(), what)
		assert.Equal(t, want, calls, what)
	}
	expect(0, "nothing written")
	for _, w := range []struct {
		what string
		do   func() error
	}{
		{"WriteAt", func() error { _, err := f.WriteAt([]byte("x"), 3); return err }},
		{"WriteV", func() error { _, err := f.WriteV([][]byte{[]byte("ab"), []byte("c")}, 9); return err }},
		{"WriteRuns", func() error {
			_, err := f.WriteRuns([]driver.Run{{Off: 20, Bufs: [][]byte{[]byte("r")}}})
			return err
		}},
		{"Truncate", func() error { return f.Truncate(100) }},
		{"Allocate", func() error { return f.Allocate(0, 4096) }},
	} {
		require.NoError(t, w.do(), w.what)
		expect(1, "after "+w.what)
		expect(0, "again after "+w.what)
	}
	_, err := f.ReadAt(make([]byte, 4), 0)
	require.NoError(t, err)
	expect(0, "after a read")

	_, err = f.WriteAt([]byte("y"), 0)
	require.NoError(t, err)
	fail = true
	calls = 0
	require.Error(t, f.Sync())
	fail = false
	expect(1, "after a failed fsync: still owed")

	_, ok := f.RawFD()
	require.True(t, ok)
	expect(1, "after RawFD")
	expect(1, "after RawFD, again")

	require.NoError(t, f.Close())
	require.Error(t, f.Sync(), "a closed file")
}
