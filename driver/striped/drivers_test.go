package striped_test

import (
	"os"
	"testing"

	"github.com/collio/collio/driver"
	_ "github.com/collio/collio/driver/beegfs"
	_ "github.com/collio/collio/driver/lustre"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mount is a statfs answer: the file system with magic mounted at dir.
type mount struct {
	dir   string
	magic uint32
}

// TestDriversAreRegisteredAndDetected checks, for every striped driver,
// that it is registered under its name, serves "name:" paths, and that a
// file about to be created on its file system (statfs magic) resolves to
// it while one on another file system resolves to ufs.
func TestDriversAreRegisteredAndDetected(t *testing.T) {
	for _, c := range []struct {
		name            string
		prefixed        string // a path to write after "name:"
		fs, other       mount
		file, otherFile string
	}{
		{"lustre", "/mnt/x/f", mount{"/lustre", 0x0BD00BD0 /* LL_SUPER_MAGIC */}, mount{"/home", 0xEF53 /* ext4 */},
			"/lustre/scratch/new.dat", "/home/f"},
		{"beegfs", "/mnt/bee/f", mount{"/mnt/bee", 0x19830326 /* BeeGFS */}, mount{"/tmp", 0x01021994 /* tmpfs */},
			"/mnt/bee/a/new.dat", "/tmp/f"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := driver.ByName(c.name)
			require.True(t, ok)
			assert.Equal(t, c.name, d.Name())
			d, path, err := driver.Resolve(c.name + ":" + c.prefixed)
			require.NoError(t, err)
			assert.Equal(t, c.name, d.Name())
			assert.Equal(t, c.prefixed, path)

			t.Cleanup(driver.SetStatfsForTest(func(path string) (uint32, error) {
				switch path {
				case c.fs.dir:
					return c.fs.magic, nil
				case "/", c.other.dir:
					return c.other.magic, nil
				}
				return 0, &os.PathError{Op: "statfs", Path: path, Err: unix.ENOENT}
			}))
			d, path, err = driver.Resolve(c.file)
			require.NoError(t, err)
			assert.Equal(t, c.name, d.Name(), "a file about to be created on "+c.name)
			assert.Equal(t, c.file, path)
			d, _, err = driver.Resolve(c.otherFile)
			require.NoError(t, err)
			assert.Equal(t, "ufs", d.Name())
		})
	}
}
