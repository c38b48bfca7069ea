package beegfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/internal/stripedfixture"
	"github.com/collio/collio/driver/striped"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeKernel plays the BeeGFS client: MKFILE_STRIPEHINTS creates the file
// in the directory (or fails with mkErr), GET_STRIPEINFO answers info or
// infoErr. A MKFILE call's Name is the name its filename pointer points to.
type fakeKernel struct {
	stripedfixture.Kernel
	t       *testing.T
	mkErr   error
	infoErr error
	info    stripeInfo
}

func (k *fakeKernel) answer(c *stripedfixture.Call, fd int, arg []byte, refs [][]byte) error {
	switch c.Req {
	case beegfsIocMkfileStripeHints:
		require.Len(k.t, refs, 1, "the name buffer travels with the call")
		ptr := uintptr(hostEndian.Uint64(arg[offMkFilename:]))
		require.Equal(k.t, uintptr(unsafe.Pointer(&refs[0][0])), ptr, "filename points at the name")
		n := slices.Index(refs[0], 0)
		require.GreaterOrEqual(k.t, n, 0, "NUL-terminated")
		c.Name = string(refs[0][:n])
		if k.mkErr != nil {
			return k.mkErr
		}
		if !c.IsDir {
			return unix.ENOTDIR
		}
		nfd, err := unix.Openat(fd, c.Name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC,
			hostEndian.Uint32(arg[offMkMode:]))
		if err != nil {
			return err
		}
		return unix.Close(nfd)
	case beegfsIocGetStripeInfo:
		if k.infoErr != nil {
			return k.infoErr
		}
		hostEndian.PutUint32(arg[0:], k.info.patternType)
		hostEndian.PutUint32(arg[4:], k.info.chunkSize)
		hostEndian.PutUint16(arg[8:], k.info.numTargets)
		return nil
	}
	return unix.ENOTTY
}

func newFake(t *testing.T) (*fakeKernel, driver.Driver) {
	if ptrSize != 8 {
		t.Skip("the fake reads a 64-bit filename pointer")
	}
	k := &fakeKernel{t: t, info: stripeInfo{patternType: patternRAID0, chunkSize: 512 << 10, numTargets: 4}}
	k.Answer = k.answer
	return k, striped.New(Name, &beegfs{ioctl: k.Ioctl})
}

func TestCreateWithLayoutGoesThroughParentDirectory(t *testing.T) {
	k, d := newFake(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.dat")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl, Perm: 0o640,
		Layout: driver.Layout{StripeSize: 1000000, StripeCount: 8, StartTarget: 3}})
	require.NoError(t, err)
	defer f.Close()

	require.Equal(t, []uint{beegfsIocMkfileStripeHints, beegfsIocGetStripeInfo}, k.Reqs())
	mk := k.Calls[0]
	assert.True(t, mk.IsDir, "MKFILE_STRIPEHINTS is issued on the parent directory")
	assert.Equal(t, "out.dat", mk.Name)
	assert.Equal(t, uint32(0o640), hostEndian.Uint32(mk.Arg[offMkMode:]))
	assert.Equal(t, uint32(8), hostEndian.Uint32(mk.Arg[offMkNumTargets:]))
	assert.Equal(t, uint32(1<<20), hostEndian.Uint32(mk.Arg[offMkChunkSize:]), "rounded up to a power of two")
	assert.False(t, k.Calls[1].IsDir)
	assert.Len(t, k.Calls[1].Arg, sizeStripeInfo)
	assert.Equal(t, driver.Layout{StripeSize: 512 << 10, StripeCount: 4, StartTarget: -1}, f.Layout(),
		"the layout read back, not the one asked for")

	_, err = f.WriteAt([]byte("abc"), 5)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	assert.EqualValues(t, 8, size)
}

func TestCreateExistingKeepsLayoutOrFailsExclusive(t *testing.T) {
	k, d := newFake(t)
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	req := driver.Layout{StripeCount: 2}

	_, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl, Layout: req})
	assert.ErrorIs(t, err, fs.ErrExist)
	var pe *os.PathError
	assert.ErrorAs(t, err, &pe)

	k.Calls = nil
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: req})
	require.NoError(t, err, "EEXIST without O_EXCL keeps the file")
	defer f.Close()
	assert.Equal(t, []uint{beegfsIocMkfileStripeHints, beegfsIocGetStripeInfo}, k.Reqs())
	size, err := f.Size()
	require.NoError(t, err)
	assert.EqualValues(t, 1, size)
}

func TestNoLayoutRequestedOrNotCreating(t *testing.T) {
	k, d := newFake(t)
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate,
		Layout: driver.Layout{StartTarget: 5}})
	require.NoError(t, err)
	f.Close()
	assert.Equal(t, []uint{beegfsIocGetStripeInfo}, k.Reqs(), "start_iodevice alone is not expressible")

	k.Calls = nil
	f, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdOnly, Layout: driver.Layout{StripeCount: 3}})
	require.NoError(t, err)
	f.Close()
	assert.Equal(t, []uint{beegfsIocGetStripeInfo}, k.Reqs())
}

func TestMkfileFailureIsAClearError(t *testing.T) {
	k, d := newFake(t)
	k.mkErr = unix.ENOSPC
	path := filepath.Join(t.TempDir(), "f")
	_, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeSize: 1 << 20}})
	assert.ErrorIs(t, err, unix.ENOSPC)
	assert.EqualError(t, err, "beegfs mkfile "+path+" (chunk size 1048576, targets default): no space left on device")

	k.mkErr = unix.ENOTTY
	_, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeCount: 2}})
	assert.ErrorContains(t, err, "not a BeeGFS file system")
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, fs.ErrNotExist)
}

func TestMkfileBadNames(t *testing.T) {
	k, d := newFake(t)
	dir := t.TempDir()
	opts := driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeCount: 2}}
	long := filepath.Join(dir, strings.Repeat("x", 300))
	_, err := d.Open(long, opts)
	assert.ErrorIs(t, err, unix.ENAMETOOLONG)
	_, err = d.Open(filepath.Join(dir, "missing", "f"), opts)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Empty(t, k.Calls)
}

func TestGetStripeInfoOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	for _, errno := range []error{unix.ENOTTY, unix.EINVAL} {
		k, d := newFake(t)
		k.infoErr = errno
		f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
		require.NoError(t, err)
		assert.Equal(t, driver.Layout{StartTarget: -1}, f.Layout())
		f.Close()
	}
	k, d := newFake(t)
	k.infoErr = unix.EIO
	_, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, unix.EIO)
	assert.ErrorContains(t, err, "beegfs get stripe info "+path)

	_, err = d.Open(filepath.Dir(path), driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, unix.EISDIR)
}
