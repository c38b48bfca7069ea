package beegfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mountDir returns a fresh directory under $COLLIO_BEEGFS_DIR, or skips.
func mountDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("COLLIO_BEEGFS_DIR")
	if base == "" {
		t.Skip("needs a BeeGFS mount: make test-beegfs COLLIO_BEEGFS_DIR=/mnt/beegfs/$USER")
	}
	dir, err := os.MkdirTemp(base, "collio-beegfs-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestMountDetected(t *testing.T) {
	dir := mountDir(t)
	name, err := driver.DetectFSName(filepath.Join(dir, "new"))
	require.NoError(t, err)
	require.Equal(t, "beegfs", name, "COLLIO_BEEGFS_DIR must be on BeeGFS")
	d, _, err := driver.Resolve(filepath.Join(dir, "new"))
	require.NoError(t, err)
	assert.Equal(t, "beegfs", d.Name())
}

func TestMountCreateWithStripeHints(t *testing.T) {
	dir := mountDir(t)
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
	dir := mountDir(t)
	f, err := New().Open(filepath.Join(dir, "plain"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
	require.NoError(t, err)
	defer f.Close()
	assert.Positive(t, f.Layout().StripeSize)
	assert.Positive(t, f.Layout().StripeCount)
}
