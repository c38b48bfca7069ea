package beegfs

import (
	"os"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestRegisteredAsBeeGFS(t *testing.T) {
	d, ok := driver.ByName("beegfs")
	require.True(t, ok)
	assert.Equal(t, Name, d.Name())
	d, path, err := driver.Resolve("beegfs:/mnt/bee/f")
	require.NoError(t, err)
	assert.Equal(t, "beegfs", d.Name())
	assert.Equal(t, "/mnt/bee/f", path)
}

func TestResolveDetectsBeeGFSByStatfsMagic(t *testing.T) {
	t.Cleanup(driver.SetStatfsForTest(func(path string) (uint32, error) {
		switch path {
		case "/mnt/bee":
			return 0x19830326, nil // BeeGFS
		case "/", "/tmp":
			return 0x01021994, nil // tmpfs
		}
		return 0, &os.PathError{Op: "statfs", Path: path, Err: unix.ENOENT}
	}))
	d, path, err := driver.Resolve("/mnt/bee/a/new.dat")
	require.NoError(t, err)
	assert.Equal(t, "beegfs", d.Name())
	assert.Equal(t, "/mnt/bee/a/new.dat", path)
	d, _, err = driver.Resolve("/tmp/f")
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
}
