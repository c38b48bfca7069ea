package lustre

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/internal/stripedfixture"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mount is where the tests on a real mount run (make test-lustre).
var mount = stripedfixture.Mount{Env: "COLLIO_LUSTRE_DIR", Driver: Name, FS: "Lustre", Example: "/lustre/scratch/$USER"}

func TestMountDetected(t *testing.T) { mount.CheckDetected(t) }

func TestMountCreateWithLayout(t *testing.T) {
	dir := mount.Dir(t)
	path := filepath.Join(dir, "striped")
	d := New()
	want := driver.Layout{StripeSize: 1 << 20, StripeCount: 2, StartTarget: -1}
	f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl, Perm: 0o644, Layout: want})
	require.NoError(t, err)
	got := f.Layout()
	assert.Equal(t, want.StripeSize, got.StripeSize)
	// Fewer OSTs than asked is possible on small systems.
	assert.LessOrEqual(t, got.StripeCount, 2)
	assert.GreaterOrEqual(t, got.StripeCount, 1)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB over both stripes
	_, err = f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	// A second open reads the same layout; setting another one keeps it.
	f, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Layout: driver.Layout{StripeSize: 4 << 20}})
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, got.StripeSize, f.Layout().StripeSize, "EEXIST keeps the existing layout")
	assert.Equal(t, got.StripeCount, f.Layout().StripeCount)
	assert.GreaterOrEqual(t, f.Layout().StartTarget, 0, "an instantiated file has a first OST")
	back := make([]byte, len(data))
	_, err = f.ReadAt(back, 0)
	require.NoError(t, err)
	assert.Equal(t, data, back)
}

func TestMountRoundsStripeSize(t *testing.T) {
	dir := mount.Dir(t)
	f, err := New().Open(filepath.Join(dir, "rounded"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate,
		Layout: driver.Layout{StripeSize: 1000000, StripeCount: 1, StartTarget: -1}})
	require.NoError(t, err)
	defer f.Close()
	assert.EqualValues(t, 1<<20, f.Layout().StripeSize)
}

func TestMountDefaultLayoutIsReported(t *testing.T) {
	mount.CheckDefaultLayout(t, New(), driver.Layout{StartTarget: -1})
}
