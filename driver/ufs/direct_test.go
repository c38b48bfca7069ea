package ufs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// directDir is an ext4 directory (/var/tmp) for the O_DIRECT tests; the
// test is skipped where the file system there refuses O_DIRECT.
func directDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "collio-direct-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	probe := filepath.Join(dir, "probe")
	f, err := os.OpenFile(probe, os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	if err != nil {
		t.Skipf("/var/tmp refuses O_DIRECT: %v", err)
	}
	f.Close()
	return dir
}

func openDirectFile(t *testing.T, path string, read, write bool) *file {
	t.Helper()
	params := map[string]string{driver.ParamDirectRead: "false", driver.ParamDirectWrite: "false"}
	if read {
		params[driver.ParamDirectRead] = "true"
	}
	if write {
		params[driver.ParamDirectWrite] = "TRUE"
	}
	df, err := New().Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Params: params})
	require.NoError(t, err)
	t.Cleanup(func() { df.Close() })
	return df.(*file)
}

// misaligned returns n bytes of data whose address is off bytes past an
// aligned one (off 0: aligned to 4096).
func misaligned(n int, off int, seed byte) []byte {
	raw := make([]byte, n+8192)
	skip := (4096 - int(uintptr(unsafe.Pointer(&raw[0]))%4096)) % 4096
	b := raw[skip+off : skip+off+n]
	copy(b, pattern(n, seed))
	return b
}

// A random mix of aligned and unaligned writes (offsets, lengths and
// addresses) through every write method leaves the file equal to a
// reference, with the whole blocks moved by O_DIRECT; reads through every
// read method, with and without aligned buffers and past end of file,
// return the reference's bytes and its end of file.
func TestDirectRandomWritesAndReads(t *testing.T) {
	dir := directDir(t)
	path := filepath.Join(dir, "f")
	f := openDirectFile(t, path, true, true)
	st := f.Direct()
	require.NoError(t, st.Err)
	require.True(t, st.Read && st.Write)
	require.Positive(t, st.OffsetAlign)
	require.Zero(t, st.Block%int64(os.Getpagesize()))

	rng := rand.New(rand.NewPCG(1, 2))
	var ref []byte
	put := func(b []byte, off int64) {
		if end := off + int64(len(b)); end > int64(len(ref)) {
			ref = append(ref, make([]byte, end-int64(len(ref)))...)
		}
		copy(ref[off:], b)
	}
	size := func() int64 {
		var n int64
		for _, choice := range []int64{1, 100, 511, 512, 4095, 4096, 4097, 8192, 65536 + 3, 1 << 20} {
			if rng.IntN(3) == 0 {
				return choice
			}
			n = choice
		}
		return n
	}
	offset := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return int64(rng.IntN(64)) * 4096
		case 1:
			return int64(rng.IntN(64)) * 512
		}
		return rng.Int64N(64 * 4096)
	}
	for i := 0; i < 300; i++ {
		n, off := size(), offset()
		memOff := []int{0, 0, 1, 512, 7}[rng.IntN(5)]
		data := misaligned(int(n), memOff, byte(i))
		switch rng.IntN(3) {
		case 0:
			got, err := f.WriteAt(data, off)
			require.NoError(t, err)
			require.Equal(t, int(n), got)
		case 1:
			cut := rng.Int64N(n + 1)
			got, err := f.WriteV([][]byte{data[:cut], nil, data[cut:]}, off)
			require.NoError(t, err)
			require.Equal(t, int(n), got)
		default:
			cut := rng.Int64N(n + 1)
			runs := []driver.Run{{Off: off, Bufs: [][]byte{data[:cut]}}, {Off: off + cut, Bufs: [][]byte{data[cut:]}}}
			got, err := f.WriteRuns(runs)
			require.NoError(t, err)
			require.Equal(t, n, got)
		}
		put(data, off)
	}
	require.Positive(t, f.dio.moved.Load(), "nothing went through O_DIRECT")
	require.Equal(t, ref, mustRead(t, path))

	for i := 0; i < 200; i++ {
		n, off := size(), offset()
		if rng.IntN(4) == 0 {
			off = int64(len(ref)) - n/2 // across end of file
			off = max(off, 0)
		}
		buf := misaligned(int(n), []int{0, 1, 512}[rng.IntN(3)], 0xEE)
		want := ref[min(off, int64(len(ref))):min(off+n, int64(len(ref)))]
		var got int
		var err error
		switch rng.IntN(3) {
		case 0:
			got, err = f.ReadAt(buf, off)
		case 1:
			cut := rng.Int64N(n + 1)
			got, err = f.ReadV([][]byte{buf[:cut], buf[cut:]}, off)
		default:
			var got64 int64
			got64, err = f.ReadRuns([]driver.Run{{Off: off, Bufs: [][]byte{buf}}})
			got = int(got64)
			if got < int(n) {
				require.Equal(t, make([]byte, int(n)-got), buf[got:], "ReadRuns zeroes past end of file")
				err = io.EOF // ReadRuns reports none
			}
		}
		require.Equal(t, len(want), got, "read %d at %d", n, off)
		require.Equal(t, want, buf[:got])
		if got < int(n) {
			require.ErrorIs(t, err, io.EOF)
		} else {
			require.NoError(t, err)
		}
	}
	st = f.Direct()
	require.NoError(t, st.Err, "a direct transfer was refused")
	require.True(t, st.Read && st.Write)
}

// Only the asked direction goes direct: direct_write alone leaves reads on
// the page cache.
func TestDirectWriteOnly(t *testing.T) {
	dir := directDir(t)
	path := filepath.Join(dir, "f")
	f := openDirectFile(t, path, false, true)
	st := f.Direct()
	require.True(t, st.Write)
	require.False(t, st.Read)
	data := misaligned(3*4096, 0, 1)
	_, err := f.WriteAt(data, 4096)
	require.NoError(t, err)
	moved := f.dio.moved.Load()
	require.Equal(t, int64(len(data)), moved)
	back := make([]byte, len(data))
	_, err = f.ReadAt(back, 4096)
	require.NoError(t, err)
	require.Equal(t, data, back)
	require.Equal(t, moved, f.dio.moved.Load(), "a read went through O_DIRECT")
}

// A file system that refuses O_DIRECT at open (EINVAL, as tmpfs before
// Linux 6.6): the file opens without it, Direct says why, and I/O works.
func TestDirectOpenRefused(t *testing.T) {
	saved := openDirect
	openDirect = func(path string, flags int) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: path, Err: unix.EINVAL}
	}
	t.Cleanup(func() { openDirect = saved })
	path := filepath.Join(t.TempDir(), "f")
	f := openDirectFile(t, path, true, true)
	st := f.Direct()
	require.False(t, st.Read || st.Write)
	require.ErrorIs(t, st.Err, unix.EINVAL)
	data := pattern(10000, 3)
	_, err := f.WriteAt(data, 5)
	require.NoError(t, err)
	back := make([]byte, len(data))
	_, err = f.ReadAt(back, 5)
	require.NoError(t, err)
	require.Equal(t, data, back)
}

// A transfer the file system refuses after the open (EINVAL) is done
// through the page cache, and so is every later one; Direct reports it.
func TestDirectTransferRefused(t *testing.T) {
	dir := directDir(t)
	path := filepath.Join(dir, "f")
	f := openDirectFile(t, path, true, true)
	f.dio.offAlign, f.dio.memAlign = 1, 1 // lie: the kernel refuses what this lets through
	data := misaligned(8192, 1, 9)
	n, err := f.WriteAt(data, 4096)
	require.NoError(t, err)
	require.Equal(t, len(data), n)
	st := f.Direct()
	require.False(t, st.Write)
	require.True(t, errors.Is(st.Err, errRefused))
	require.Equal(t, append(make([]byte, 4096), data...), mustRead(t, path))
}

// tmpfs (/dev/shm): on kernels from 6.6 O_DIRECT opens and works there;
// before, the open fails and the file goes through the page cache. Either
// way the data is right and Direct tells which.
func TestDirectTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "collio-direct-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "f")
	f := openDirectFile(t, path, true, true)
	st := f.Direct()
	if st.Err != nil {
		require.ErrorIs(t, st.Err, unix.EINVAL)
		t.Logf("tmpfs refuses O_DIRECT here: %v", st.Err)
	} else {
		require.True(t, st.Read && st.Write)
		t.Logf("tmpfs takes O_DIRECT here (alignment %d, block %d)", st.OffsetAlign, st.Block)
	}
	data := misaligned(3*4096+17, 3, 4)
	_, err = f.WriteAt(data, 100)
	require.NoError(t, err)
	back := make([]byte, len(data)+50)
	n, err := f.ReadAt(back, 100)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, len(data), n)
	require.Equal(t, data, back[:n])
	require.True(t, bytes.Equal(append(make([]byte, 100), data...), mustRead(t, path)))
}

func TestDirectHelpers(t *testing.T) {
	bufs := [][]byte{[]byte("abc"), nil, []byte("defgh"), []byte("i")}
	join := func(b [][]byte) string { return string(bytes.Join(b, nil)) }
	require.Equal(t, "cdef", join(span(bufs, 2, 6)))
	require.Equal(t, "abcdefghi", join(span(bufs, 0, 9)))
	require.Empty(t, span(bufs, 4, 4))
	require.Equal(t, int64(12), lcm(4, 6))
	require.Equal(t, int64(4096), lcm(512, 4096))
	require.Equal(t, int64(4096), alignUp(1, 4096))
	require.Equal(t, int64(0), alignUp(0, 4096))
	require.Equal(t, int64(4096), alignDown(8191, 4096))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
