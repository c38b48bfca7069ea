package beegfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/internal/stripedfixture"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mount is where the tests on a real mount run (make test-beegfs).
var mount = stripedfixture.Mount{Env: "COLLIO_BEEGFS_DIR", Driver: Name, FS: "BeeGFS", Example: "/mnt/beegfs/$USER"}

func TestMountDetected(t *testing.T) { mount.CheckDetected(t) }

func TestMountCreateWithStripeHints(t *testing.T) {
	dir := mount.Dir(t)
	path := filepath.Join(dir, "striped")
	d := New()
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl, Perm: 0o644,
		Layout: driver.Layout{StripeSize: 1 << 20, StripeCount: 2}})
	require.NoError(t, err)
	got := f.Layout()
	assert.EqualValues(t, 1<<20, got.StripeSize)
	assert.GreaterOrEqual(t, got.StripeCount, 1)
	assert.LessOrEqual(t, got.StripeCount, 2)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<17)
	_, err = f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl,
		Layout: driver.Layout{StripeCount: 1}})
	assert.ErrorIs(t, err, os.ErrExist)

	f, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdOnly})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, got, f.Layout())
	back := make([]byte, len(data))
	_, err = f.ReadAt(back, 0)
	require.NoError(t, err)
	assert.Equal(t, data, back)
}

func TestMountDefaultLayoutIsReported(t *testing.T) {
	mount.CheckDefaultLayout(t, New(), driver.Layout{})
}
