package striped

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeFS is a Striping that records on which descriptors its steps ran.
type fakeFS struct {
	prepared  int
	addFlags  int   // Prepare adds these to the open flags
	prepErr   error // Prepare fails with this
	applyErr  error // the step on the descriptor fails with this
	layoutErr error
	applyFDs  []int
	layoutFDs []int
	applyFl   int // F_GETFL of the descriptor the step saw
}

var fakeLayout = driver.Layout{StripeSize: 1 << 20, StripeCount: 3, StartTarget: 2}

func (s *fakeFS) Prepare(path string, opts driver.OpenOptions) (int, func(fd int) error, error) {
	s.prepared++
	if s.prepErr != nil {
		return 0, nil, s.prepErr
	}
	return opts.Flags | s.addFlags, func(fd int) error {
		s.applyFDs = append(s.applyFDs, fd)
		s.applyFl, _ = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		return s.applyErr
	}, nil
}

func (s *fakeFS) Layout(fd int, path string) (driver.Layout, error) {
	s.layoutFDs = append(s.layoutFDs, fd)
	return fakeLayout, s.layoutErr
}

// opens counts the open(2) calls of the package on each path and the
// descriptor each returned; fail, when set, answers instead of the kernel.
type opens struct {
	calls map[string]int
	fds   map[string][]int
	flags map[string]int
	fail  func(path string, n int) error
}

func countOpens(t *testing.T) *opens {
	o := &opens{calls: map[string]int{}, fds: map[string][]int{}, flags: map[string]int{}}
	prev := sysOpen
	sysOpen = func(path string, flags int, perm uint32) (int, error) {
		o.calls[path]++
		o.flags[path] = flags
		if o.fail != nil {
			if err := o.fail(path, o.calls[path]); err != nil {
				return -1, err
			}
		}
		fd, err := prev(path, flags, perm)
		if err == nil {
			o.fds[path] = append(o.fds[path], fd)
		}
		return fd, err
	}
	t.Cleanup(func() { sysOpen = prev })
	return o
}

// fdsOn lists this process's descriptors open on path (/proc/self/fd).
func fdsOn(t *testing.T, path string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []int
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == path {
			var fd int
			fmt.Sscan(e.Name(), &fd)
			out = append(out, fd)
		}
	}
	return out
}

func TestOneOpenPerFile(t *testing.T) {
	o := countOpens(t)
	s := &fakeFS{}
	d := New("fake", s)
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl})
	require.NoError(t, err)

	require.Equal(t, 1, o.calls[path], "the file is opened once")
	fd := o.fds[path][0]
	assert.Equal(t, []int{fd}, s.applyFDs, "the step runs on that descriptor")
	assert.Equal(t, []int{fd}, s.layoutFDs, "so does Layout")
	assert.Equal(t, []int{fd}, fdsOn(t, path), "and it is the one descriptor left on the file")
	assert.Equal(t, fakeLayout, f.Layout())

	// The I/O goes through that descriptor.
	_, err = f.WriteAt([]byte("striped"), 4)
	require.NoError(t, err)
	got := make([]byte, 7)
	_, err = unix.Pread(fd, got, 4)
	require.NoError(t, err)
	assert.Equal(t, "striped", string(got))

	require.NoError(t, f.Close())
	assert.Empty(t, fdsOn(t, path), "Close closes it")

	// Opening an existing file: no Prepare, still one open.
	f, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdOnly})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 2, o.calls[path])
	assert.Equal(t, 1, s.prepared, "Prepare runs only when the open may create")
	assert.Equal(t, []int{o.fds[path][1]}, fdsOn(t, path))
}

func TestOneOpenWithDirectIO(t *testing.T) {
	// direct_read makes ufs open an O_DIRECT descriptor beside the ordinary
	// one (or fail to, on a file system without O_DIRECT): that is its only
	// open, the ordinary descriptor is still the one this package opened.
	o := countOpens(t)
	d := New("fake", &fakeFS{})
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate,
		Params: map[string]string{driver.ParamDirectRead: "true"}})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 1, o.calls[path])
	want := []int{o.fds[path][0]}
	st, ok := driver.DirectOf(f)
	require.True(t, ok, "DirectOf looks through to the ufs file")
	if st.Read {
		assert.Len(t, fdsOn(t, path), 2)
	} else {
		assert.Equal(t, want, fdsOn(t, path))
	}
	assert.Contains(t, fdsOn(t, path), want[0])
}

func TestOpenRetriesInterruptedOpens(t *testing.T) {
	o := countOpens(t)
	o.fail = func(_ string, n int) error {
		if n <= 2 {
			return unix.EINTR
		}
		return nil
	}
	path := filepath.Join(t.TempDir(), "f")
	f, err := New("fake", &fakeFS{}).Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 3, o.calls[path], "two interrupted opens, then the real one")
	assert.Len(t, fdsOn(t, path), 1)

	o.fail = func(string, int) error { return unix.EACCES }
	_, err = New("fake", &fakeFS{}).Open(path, driver.OpenOptions{Flags: driver.ORdWr})
	assert.ErrorIs(t, err, unix.EACCES)
	var pe *os.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, path, pe.Path)
	assert.Equal(t, 4, o.calls[path], "other errors are not retried")
}

func TestPrepareChoosesTheFlagsAndCanStopTheOpen(t *testing.T) {
	o := countOpens(t)
	s := &fakeFS{addFlags: unix.O_ASYNC}
	path := filepath.Join(t.TempDir(), "f")
	f, err := New("fake", s).Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
	require.NoError(t, err)
	f.Close()
	assert.Equal(t, driver.ORdWr|driver.OCreate|unix.O_ASYNC|unix.O_CLOEXEC, o.flags[path])
	assert.NotZero(t, s.applyFl&unix.O_ASYNC, "the step sees the descriptor Prepare's flags made")

	stop := errors.New("cannot express this layout")
	other := filepath.Join(filepath.Dir(path), "g")
	_, err = New("fake", &fakeFS{prepErr: stop}).Open(other, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
	assert.ErrorIs(t, err, stop)
	assert.Zero(t, o.calls[other], "nothing is opened")
	_, statErr := os.Stat(other)
	assert.ErrorIs(t, statErr, fs.ErrNotExist)
}

func TestFailedStepsCloseTheDescriptor(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	for name, s := range map[string]*fakeFS{"step": {applyErr: boom}, "layout": {layoutErr: boom}} {
		path := filepath.Join(dir, name)
		_, err := New("fake", s).Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
		assert.ErrorIs(t, err, boom, name)
		assert.Empty(t, fdsOn(t, path), name+": no descriptor left behind")
	}
	s := &fakeFS{}
	_, err := New("fake", s).Open(dir, driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, unix.EISDIR)
	assert.Empty(t, s.layoutFDs, "no ioctl on a directory")
	assert.Empty(t, fdsOn(t, dir))
}

func TestFileLooksThroughToUFS(t *testing.T) {
	d := New("fake", &fakeFS{})
	assert.Equal(t, "fake", d.Name())
	path := filepath.Join(t.TempDir(), "f")
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Perm: 0o600})
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	u, ok := f.(interface{ Unwrap() driver.File })
	require.True(t, ok)
	assert.Equal(t, driver.Layout{StripeCount: 1, StartTarget: -1}, u.Unwrap().Layout(), "a ufs file underneath")
	n, err := f.(driver.RunWriter).WriteRuns([]driver.Run{{Off: 0, Bufs: [][]byte{[]byte("ab")}}, {Off: 10, Bufs: [][]byte{[]byte("cd")}}})
	require.NoError(t, err)
	assert.EqualValues(t, 4, n)
	back := []driver.Run{{Off: 10, Bufs: [][]byte{make([]byte, 2)}}, {Off: 0, Bufs: [][]byte{make([]byte, 2)}}}
	_, err = f.(driver.RunReader).ReadRuns(back)
	require.NoError(t, err)
	assert.Equal(t, "cdab", string(back[0].Bufs[0])+string(back[1].Bufs[0]))
	require.NoError(t, f.Close())

	require.NoError(t, d.Delete(path))
	assert.ErrorIs(t, d.Delete(path), fs.ErrNotExist)
}

func TestLayoutErrorMessage(t *testing.T) {
	e := &LayoutError{FS: "lustre", Op: "setstripe", Path: "/x",
		Request: Requested("stripe size", 1<<20) + ", " + Requested("stripe count", 0), Reason: "not a Lustre file system", Err: unix.ENOTTY}
	assert.EqualError(t, e, "lustre setstripe /x (stripe size 1048576, stripe count default): not a Lustre file system: "+unix.ENOTTY.Error())
	assert.ErrorIs(t, e, unix.ENOTTY)
	assert.EqualError(t, &LayoutError{FS: "beegfs", Op: "get stripe info", Path: "/y", Err: unix.EIO},
		"beegfs get stripe info /y: input/output error")
}
