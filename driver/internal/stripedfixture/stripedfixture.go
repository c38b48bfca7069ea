// Package stripedfixture holds what the tests of every striped driver
// (driver/lustre, driver/beegfs) share: a stand-in for the kernel that
// records the ioctls, and the setup and common checks of the tests on a
// real mount.
package stripedfixture

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Call is one ioctl the Kernel saw.
type Call struct {
	Req   uint
	Arg   []byte // a copy of the argument as passed in
	Flags int    // the descriptor's F_GETFL
	IsDir bool   // the descriptor is a directory
	Name  string // for the answer to fill in (a name the argument points to)
}

// Kernel stands in for a file system's ioctls (a striped.Ioctl): Ioctl
// records each call and has Answer reply to it.
type Kernel struct {
	Calls []Call
	// Answer replies to c; it may write arg, as the kernel does, and
	// fill in c.
	Answer func(c *Call, fd int, arg []byte, refs [][]byte) error
}

// Ioctl is the striped.Ioctl to hand to the driver.
func (k *Kernel) Ioctl(fd int, req uint, arg []byte, refs ...[]byte) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	k.Calls = append(k.Calls, Call{Req: req, Arg: slices.Clone(arg), Flags: fl, IsDir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
	return k.Answer(&k.Calls[len(k.Calls)-1], fd, arg, refs)
}

// Reqs lists the request numbers of the calls, in order.
func (k *Kernel) Reqs() []uint {
	var out []uint
	for _, c := range k.Calls {
		out = append(out, c.Req)
	}
	return out
}

// Mount is where a driver's tests on a real mount run: a directory on
// the file system, named by an environment variable.
type Mount struct {
	Env     string // the environment variable
	Driver  string // the driver's name (and make target test-<Driver>)
	FS      string // the file system's name, for messages
	Example string // a directory to show in the skip message
}

// Dir returns a fresh directory under the one m.Env names, or skips the
// test when m.Env is not set. The directory is removed when the test ends.
func (m Mount) Dir(t *testing.T) string {
	t.Helper()
	base := os.Getenv(m.Env)
	if base == "" {
		t.Skipf("needs a %s mount: make test-%s %s=%s", m.FS, m.Driver, m.Env, m.Example)
	}
	dir, err := os.MkdirTemp(base, "collio-"+m.Driver+"-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// CheckDetected checks that the directory is on the driver's file system
// and that a new file there resolves to the driver.
func (m Mount) CheckDetected(t *testing.T) {
	t.Helper()
	dir := m.Dir(t)
	name, err := driver.DetectFSName(filepath.Join(dir, "new"))
	require.NoError(t, err)
	require.Equal(t, m.Driver, name, m.Env+" must be on "+m.FS)
	d, _, err := driver.Resolve(filepath.Join(dir, "new"))
	require.NoError(t, err)
	assert.Equal(t, m.Driver, d.Name())
}

// CheckDefaultLayout checks that a file d creates there with request l
// (asking for no particular layout) reports the layout the file system
// gave it.
func (m Mount) CheckDefaultLayout(t *testing.T, d driver.Driver, l driver.Layout) {
	t.Helper()
	f, err := d.Open(filepath.Join(m.Dir(t), "plain"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: l})
	require.NoError(t, err)
	defer f.Close()
	assert.Positive(t, f.Layout().StripeSize)
	assert.Positive(t, f.Layout().StripeCount)
}
