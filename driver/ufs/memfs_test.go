package ufs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openInMemory creates a file under /dev/shm (tmpfs on Linux).
func openInMemory(t *testing.T) *file {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "collio-ufs-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := openPath(t, filepath.Join(dir, "f"), driver.ORdWr|driver.OCreate)
	require.True(t, f.memory, "a file in /dev/shm is in memory")
	return f
}

func TestInMemoryFollowsTheFileSystem(t *testing.T) {
	f, path := openNew(t)
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(filepath.Dir(path), &st))
	require.Equal(t, st.Type == tmpfsMagic, f.memory)
	openInMemory(t)
}

// Raw calls move at most rawChunk bytes and rawIOVs buffers at a time:
// transfers larger than both arrive whole and in order.
func TestRawCallsMoveEverything(t *testing.T) {
	f := openInMemory(t)
	big := pattern(2*rawChunk+17, 3)
	n, err := f.WriteAt(big, 5)
	require.NoError(t, err)
	require.Equal(t, len(big), n)
	back := make([]byte, len(big))
	n, err = f.ReadAt(back, 5)
	require.NoError(t, err)
	require.Equal(t, len(big), n)
	require.True(t, bytes.Equal(big, back))

	bufs := append(manyBuffers(2500, 7), pattern(rawChunk+3, 9), pattern(100, 1))
	want := bytes.Join(bufs, nil)
	n, err = f.WriteV(bufs, 1000)
	require.NoError(t, err)
	require.Equal(t, len(want), n)
	got := sameShape(bufs)
	n, err = f.ReadV(got, 1000)
	require.NoError(t, err)
	require.Equal(t, len(want), n)
	require.Equal(t, bufs, got)

	// Past the end: a short count and io.EOF, as with Go's calls.
	size, err := f.Size()
	require.NoError(t, err)
	n, err = f.ReadAt(make([]byte, 10), size-4)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 4, n)
	n, err = f.ReadV([][]byte{make([]byte, 3), make([]byte, 3)}, size-4)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, 4, n)
}

// An error of a raw call reaches the caller with the operation and path.
func TestRawCallErrors(t *testing.T) {
	f := openInMemory(t)
	ro := openPath(t, f.path, driver.ORdOnly)
	require.True(t, ro.memory)
	_, err := ro.WriteAt([]byte("x"), 0)
	require.ErrorIs(t, err, unix.EBADF)
	require.ErrorContains(t, err, "pwrite "+f.path)
	_, err = ro.WriteV([][]byte{[]byte("x")}, 0)
	require.ErrorIs(t, err, unix.EBADF)
	require.ErrorContains(t, err, "pwritev "+f.path)
}

// A magic the opener passes decides whether the file is in memory; the
// file system is not asked again.
func TestOpenTrustsTheMagicItIsGiven(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "collio-ufs-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	const ext4Magic = 0xEF53
	for magic, memory := range map[uint32]bool{0: true, ext4Magic: false, tmpfsMagic: true} {
		df, err := New().Open(filepath.Join(dir, "f"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, FSMagic: magic})
		require.NoError(t, err)
		require.Equal(t, memory, df.(*file).memory, "magic %#x (0: asked of the descriptor)", magic)
		require.NoError(t, df.Close())
	}
}
