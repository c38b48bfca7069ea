package ufs

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// forceFallocateError makes fallocate fail with errno for one test and
// counts the calls.
func forceFallocateError(t *testing.T, errno unix.Errno) *int {
	t.Helper()
	calls := new(int)
	saved := fallocate
	fallocate = func(int, uint32, int64, int64) error {
		*calls++
		return errno
	}
	t.Cleanup(func() { fallocate = saved })
	return calls
}

// requireAllocated checks that the file's blocks cover at least want
// bytes, on file systems known to store zeros (others may compress or
// dedupe them, so there the check is skipped).
func requireAllocated(t *testing.T, f *file, want int64) {
	t.Helper()
	var fsst unix.Statfs_t
	var st unix.Stat_t
	require.NoError(t, f.withFD("stat", func(fd int) error {
		if err := unix.Fstatfs(fd, &fsst); err != nil {
			return err
		}
		return unix.Fstat(fd, &st)
	}))
	switch uint32(fsst.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		assert.GreaterOrEqual(t, st.Blocks*512, want, "blocks are reserved")
	default:
		t.Logf("file system 0x%x: block count not checked", uint32(fsst.Type))
	}
}

func readAll(t *testing.T, f *file) []byte {
	t.Helper()
	size, err := f.Size()
	require.NoError(t, err)
	buf := make([]byte, size)
	_, err = f.ReadAt(buf, 0)
	require.NoError(t, err)
	return buf
}

// sparseFileWithData writes two patterns with a hole between them and
// returns the expected content.
func sparseFileWithData(t *testing.T, f *file) []byte {
	t.Helper()
	want := make([]byte, 3<<20+500)
	copy(want[100:], pattern(1000, 1))
	copy(want[allocChunk-300:], pattern(700, 2)) // across a chunk boundary
	copy(want[3<<20:], pattern(500, 3))
	for _, at := range []int{100, allocChunk - 300, 3 << 20} {
		end := at + 1000
		end = min(end, len(want))
		_, err := f.WriteAt(want[at:end], int64(at))
		require.NoError(t, err)
	}
	return want
}

func TestAllocateGrowsAndKeepsData(t *testing.T) {
	f, _ := openNew(t)
	_, err := f.WriteAt([]byte("hello"), 0)
	require.NoError(t, err)

	require.NoError(t, f.Allocate(0, 1<<20))
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), size)
	requireAllocated(t, f, 1<<20)
	got := readAll(t, f)
	assert.Equal(t, "hello", string(got[:5]))
	assert.True(t, bytes.Equal(make([]byte, 1<<20-5), got[5:]))

	require.NoError(t, f.Allocate(0, 10), "a smaller range never shrinks")
	size, _ = f.Size()
	assert.Equal(t, int64(1<<20), size)

	require.NoError(t, f.Allocate(2<<20, 4096))
	size, _ = f.Size()
	assert.Equal(t, int64(2<<20+4096), size)

	require.NoError(t, f.Allocate(5<<20, 0), "zero length is a no-op")
	size, _ = f.Size()
	assert.Equal(t, int64(2<<20+4096), size)
}

func TestAllocateFallbackFillsHolesAndKeepsData(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EOPNOTSUPP, unix.ENOSYS} {
		calls := forceFallocateError(t, errno)
		f, _ := openNew(t)
		want := sparseFileWithData(t, f)

		require.NoError(t, f.Allocate(0, 5<<20), errno)
		assert.Equal(t, 1, *calls, "fallocate was tried first")
		size, err := f.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(5<<20), size)
		requireAllocated(t, f, 5<<20)

		got := readAll(t, f)
		assert.True(t, bytes.Equal(want, got[:len(want)]), "data inside the old size is unchanged")
		assert.True(t, bytes.Equal(make([]byte, len(got)-len(want)), got[len(want):]), "the extension is zeros")
	}
}

func TestAllocateFallbackRangeInsideAndBeyond(t *testing.T) {
	forceFallocateError(t, unix.EOPNOTSUPP)
	f, _ := openNew(t)
	want := sparseFileWithData(t, f)

	// Entirely inside: the size stays and the data too.
	require.NoError(t, f.Allocate(50, allocChunk))
	assert.Equal(t, want, readAll(t, f))

	// Starting past the end: the file grows to off+length.
	require.NoError(t, f.Allocate(4<<20, 1000))
	size, _ := f.Size()
	assert.Equal(t, int64(4<<20+1000), size)
	got := readAll(t, f)
	assert.True(t, bytes.Equal(want, got[:len(want)]))
}

func TestAllocateReportsOtherErrors(t *testing.T) {
	calls := forceFallocateError(t, unix.ENOSPC)
	f, _ := openNew(t)
	err := f.Allocate(0, 1<<20)
	assert.ErrorIs(t, err, unix.ENOSPC)
	assert.Equal(t, 1, *calls)
	size, _ := f.Size()
	assert.Zero(t, size, "no fallback for a real failure")
}
