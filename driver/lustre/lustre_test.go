package lustre

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/internal/stripedfixture"
	"github.com/collio/collio/driver/striped"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeKernel answers LL_IOC_LOV_SETSTRIPE with setErr and
// LL_IOC_LOV_GETSTRIPE with getErr or by copying layout into the buffer.
type fakeKernel struct {
	stripedfixture.Kernel
	setErr error
	getErr error
	layout []byte
}

func (k *fakeKernel) answer(c *stripedfixture.Call, _ int, arg []byte, _ [][]byte) error {
	switch c.Req {
	case llIocLovSetstripe:
		return k.setErr
	case llIocLovGetstripe:
		if k.getErr != nil {
			return k.getErr
		}
		copy(arg, k.layout)
		return nil
	}
	return unix.ENOTTY
}

// async: the call's descriptor had O_ASYNC (part of O_LOV_DELAY_CREATE).
func async(c stripedfixture.Call) bool { return c.Flags&unix.O_ASYNC != 0 }

func newFake() (*fakeKernel, driver.Driver) {
	k := &fakeKernel{layout: answer(lovUserMagicV1, 1<<20, 4, 0, 3, 4, 5, 6)}
	k.Answer = k.answer
	return k, striped.New(Name, &lustre{ioctl: k.Ioctl})
}

func createOpts(l driver.Layout) driver.OpenOptions {
	return driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl, Perm: 0o644, Layout: l}
}

func TestCreateWithLayoutSetsThenReadsStriping(t *testing.T) {
	k, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, createOpts(driver.Layout{StripeSize: 1 << 20, StripeCount: 4, StartTarget: 3}))
	require.NoError(t, err)
	defer f.Close()

	require.Equal(t, []uint{llIocLovSetstripe, llIocLovGetstripe}, k.Reqs())
	set := k.Calls[0]
	assert.True(t, async(set), "setstripe runs on the descriptor opened with O_LOV_DELAY_CREATE")
	assert.Equal(t, setstripe{stripeSize: 1 << 20, stripeCount: 4, stripeOffset: 3}.encode(), set.Arg)
	assert.Len(t, k.Calls[1].Arg, getstripeBufSize)
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 4, StartTarget: 3}, f.Layout())

	// The I/O goes through ufs.
	_, err = f.WriteAt([]byte("hello"), 10)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	assert.EqualValues(t, 15, size)
	got := make([]byte, 5)
	_, err = f.ReadAt(got, 10)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
}

func TestCreateWithoutLayoutOnlyReads(t *testing.T) {
	k, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, createOpts(driver.Layout{StartTarget: -1}))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []uint{llIocLovGetstripe}, k.Reqs())
	assert.False(t, async(k.Calls[0]), "no delayed create without a layout to set")
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 4, StartTarget: 3}, f.Layout())
}

func TestOpenExistingNeverSetsLayout(t *testing.T) {
	k, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdOnly, Layout: driver.Layout{StripeCount: 8}})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []uint{llIocLovGetstripe}, k.Reqs())
	b := make([]byte, 4)
	_, err = f.ReadAt(b, 0)
	require.NoError(t, err)
	assert.Equal(t, "data", string(b))
}

func TestCreateTruncAppendFlagsReachTheFile(t *testing.T) {
	_, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("old contents"), 0o644))
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | os.O_TRUNC})
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	assert.Zero(t, size, "O_TRUNC is applied once, by the first open")
	require.NoError(t, f.Close())

	_, err = d.Open(path, createOpts(driver.Layout{}))
	assert.ErrorIs(t, err, fs.ErrExist, "O_EXCL on an existing file")
}

func TestSetstripeEEXISTKeepsExistingLayout(t *testing.T) {
	k, d := newFake()
	k.setErr = unix.EEXIST
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeCount: 2}})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []uint{llIocLovSetstripe, llIocLovGetstripe}, k.Reqs())
	assert.Equal(t, 4, f.Layout().StripeCount, "the layout the file has, not the one asked for")
}

func TestSetstripeFailureIsAClearError(t *testing.T) {
	k, d := newFake()
	k.setErr = unix.EPERM
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	_, err := d.Open(path, createOpts(driver.Layout{StripeSize: 1 << 20, StripeCount: 2, StartTarget: -1}))
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.EPERM)
	var le *LayoutError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "setstripe", le.Op)
	assert.Equal(t, "lustre setstripe "+path+" (stripe size 1048576, stripe count 2, start OST default): operation not permitted",
		err.Error())
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, fs.ErrNotExist, "an exclusive create that failed leaves no file")

	// Without O_EXCL the file may have existed before: it stays.
	k.setErr = unix.ENOTTY
	_, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeCount: 2}})
	assert.ErrorIs(t, err, unix.ENOTTY)
	assert.Contains(t, err.Error(), "not a Lustre file system")
	_, statErr = os.Stat(path)
	assert.NoError(t, statErr)
}

func TestRequestAdjustment(t *testing.T) {
	cases := []struct {
		name string
		in   driver.Layout
		want *setstripe
	}{
		{"nothing", driver.Layout{StartTarget: -1}, nil},
		{"zero value", driver.Layout{}, nil},
		{"exact", driver.Layout{StripeSize: 4 << 20, StripeCount: 8, StartTarget: 2},
			&setstripe{stripeSize: 4 << 20, stripeCount: 8, stripeOffset: 2}},
		{"round up to 64 KiB", driver.Layout{StripeSize: 1000000, StartTarget: -1},
			&setstripe{stripeSize: 1 << 20, stripeOffset: lovOffsetDefault}},
		{"tiny", driver.Layout{StripeSize: 1, StartTarget: -1},
			&setstripe{stripeSize: 1 << 16, stripeOffset: lovOffsetDefault}},
		{"huge size capped", driver.Layout{StripeSize: 1 << 40, StartTarget: -1},
			&setstripe{stripeSize: 0xFFFF0000, stripeOffset: lovOffsetDefault}},
		{"count capped", driver.Layout{StripeCount: 100000, StartTarget: -1},
			&setstripe{stripeCount: 2000, stripeOffset: lovOffsetDefault}},
		{"start only", driver.Layout{StartTarget: 7}, &setstripe{stripeOffset: 7}},
		{"start 0 is the default", driver.Layout{StripeCount: 2, StartTarget: 0},
			&setstripe{stripeCount: 2, stripeOffset: lovOffsetDefault}},
		{"max index", driver.Layout{StartTarget: 0xFFDF}, &setstripe{stripeOffset: 0xFFDF}},
	}
	for _, c := range cases {
		got, err := requestFor("/x", driver.OpenOptions{Layout: c.in})
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}

	got, err := requestFor("/x", driver.OpenOptions{Layout: driver.Layout{StartTarget: -1}, Params: map[string]string{PoolParam: "ssd"}})
	require.NoError(t, err)
	assert.Equal(t, &setstripe{stripeOffset: lovOffsetDefault, pool: "ssd"}, got, "a pool alone is a request")

	_, err = requestFor("/x", driver.OpenOptions{Layout: driver.Layout{StartTarget: 0xFFE0}})
	assert.ErrorIs(t, err, unix.EINVAL)
	assert.ErrorContains(t, err, "start_iodevice 65504 is not a possible OST index")
	_, err = requestFor("/x", driver.OpenOptions{Params: map[string]string{PoolParam: "sixteen_chars_xx"}})
	assert.ErrorContains(t, err, "longer than 15 bytes")
}

func TestInvalidRequestCreatesNothing(t *testing.T) {
	k, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	_, err := d.Open(path, createOpts(driver.Layout{StartTarget: 70000}))
	assert.ErrorIs(t, err, unix.EINVAL)
	assert.Empty(t, k.Calls)
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, fs.ErrNotExist)
}

func TestPoolUsesV3(t *testing.T) {
	k, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	opts := createOpts(driver.Layout{StripeCount: 2, StartTarget: -1})
	opts.Params = map[string]string{PoolParam: "flash"}
	f, err := d.Open(path, opts)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, llIocLovSetstripe, k.Calls[0].Req)
	assert.Equal(t, setstripe{stripeCount: 2, stripeOffset: lovOffsetDefault, pool: "flash"}.encode(), k.Calls[0].Arg)
}

func TestGetstripeOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	unknown := driver.Layout{StripeSize: 0, StripeCount: 0, StartTarget: -1}
	for _, errno := range []error{unix.ENODATA, unix.ENOTTY, unix.EOPNOTSUPP} {
		k, d := newFake()
		k.getErr = errno
		f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
		require.NoError(t, err, errno.Error())
		assert.Equal(t, unknown, f.Layout(), errno.Error())
		f.Close()
	}

	k, d := newFake()
	k.getErr = unix.EIO
	_, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, unix.EIO)
	assert.ErrorContains(t, err, "lustre getstripe "+path)

	k, d = newFake()
	k.layout = []byte{0xD0, 0x0B, 0xD7, 0x0B} // a foreign layout
	_, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, unix.EPROTO)
	assert.ErrorContains(t, err, "unsupported layout magic")
}

func TestOpenErrorsAreOSErrors(t *testing.T) {
	k, d := newFake()
	dir := t.TempDir()
	_, err := d.Open(filepath.Join(dir, "missing"), driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *os.PathError
	assert.ErrorAs(t, err, &pe)

	_, err = d.Open(dir, driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, unix.EISDIR)
	assert.Empty(t, k.Calls, "no ioctl on a directory")
}

func TestDelete(t *testing.T) {
	_, d := newFake()
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, d.Delete(path))
	assert.True(t, errors.Is(d.Delete(path), fs.ErrNotExist))
}
