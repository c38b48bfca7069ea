package lustre

import (
	"os"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestRegisteredAsLustre(t *testing.T) {
	d, ok := driver.ByName("lustre")
	require.True(t, ok)
	assert.Equal(t, Name, d.Name())

	d, path, err := driver.Resolve("lustre:/mnt/x/f")
	require.NoError(t, err)
	assert.Equal(t, "lustre", d.Name())
	assert.Equal(t, "/mnt/x/f", path)
}

func TestResolveDetectsLustreByStatfsMagic(t *testing.T) {
	t.Cleanup(driver.SetStatfsForTest(func(path string) (uint32, error) {
		switch path {
		case "/lustre":
			return 0x0BD00BD0, nil // LL_SUPER_MAGIC
		case "/", "/home":
			return 0xEF53, nil // ext4
		}
		return 0, &os.PathError{Op: "statfs", Path: path, Err: unix.ENOENT}
	}))
	d, path, err := driver.Resolve("/lustre/scratch/new.dat")
	require.NoError(t, err)
	assert.Equal(t, "lustre", d.Name(), "a file about to be created on Lustre")
	assert.Equal(t, "/lustre/scratch/new.dat", path)

	d, _, err = driver.Resolve("/home/f")
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
}
