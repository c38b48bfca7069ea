package driver

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeStatfs replaces fsMagic for one test: paths in magics report that
// magic, every other path does not exist. It records the paths asked.
func fakeStatfs(t *testing.T, magics map[string]uint32) *[]string {
	t.Helper()
	asked := &[]string{}
	saved := fsMagic
	fsMagic = func(path string) (uint32, error) {
		*asked = append(*asked, path)
		if m, ok := magics[path]; ok {
			return m, nil
		}
		return 0, &os.PathError{Op: "statfs", Path: path, Err: unix.ENOENT}
	}
	t.Cleanup(func() { fsMagic = saved })
	return asked
}

func registryWith(names ...string) *registry {
	r := newRegistry()
	for _, n := range names {
		r.register(fakeDriver{n})
	}
	return r
}

func TestSplitFSPrefix(t *testing.T) {
	cases := []struct {
		path, prefix, rest string
		ok                 bool
	}{
		{"ufs:/tmp/x", "ufs", "/tmp/x", true},
		{"lustre:rel/path", "lustre", "rel/path", true},
		{"pvfs2:/x", "pvfs2", "/x", true},
		{"/x/y:z", "", "", false},
		{"./a:b", "", "", false},
		{"a/b:c", "", "", false},
		{"2fs:/x", "", "", false},
		{"UFS:/x", "", "", false},
		{":/x", "", "", false},
		{"plain", "", "", false},
		{"", "", "", false},
	}
	for _, c := range cases {
		prefix, rest, ok := splitFSPrefix(c.path)
		assert.Equal(t, c.ok, ok, c.path)
		assert.Equal(t, c.prefix, prefix, c.path)
		assert.Equal(t, c.rest, rest, c.path)
	}
}

func TestResolveRegisteredPrefixIsStripped(t *testing.T) {
	fakeStatfs(t, nil) // a prefix must not trigger detection
	r := registryWith("ufs", "sim")
	d, path, err := r.resolve("sim:/data/f", 0)
	require.NoError(t, err)
	assert.Equal(t, "sim", d.Name())
	assert.Equal(t, "/data/f", path)

	d, path, err = r.resolve("ufs:/tmp/x", 0)
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
	assert.Equal(t, "/tmp/x", path)
}

func TestResolveKnownButUnregisteredPrefix(t *testing.T) {
	r := registryWith("ufs", "sim")
	for _, prefix := range []string{"lustre", "beegfs"} {
		_, _, err := r.resolve(prefix+":/x", 0)
		require.Error(t, err)
		assert.ErrorIs(t, err, unix.EOPNOTSUPP)
		var re *ResolveError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, prefix, re.FS)
		assert.Contains(t, err.Error(), prefix+":")
		assert.Contains(t, err.Error(), "sim, ufs")
	}
	_, _, err := registryWith("ufs").resolve("sim:/x", 0)
	assert.ErrorIs(t, err, unix.EOPNOTSUPP)
}

func TestResolveUnknownPrefix(t *testing.T) {
	_, _, err := registryWith("ufs").resolve("foo9:/x", 0)
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.EINVAL)
	assert.Contains(t, err.Error(), `"foo9:"`)
	assert.Contains(t, err.Error(), "registered drivers: ufs")
}

func TestResolveColonLaterInPathIsPlain(t *testing.T) {
	fakeStatfs(t, map[string]uint32{".": 0xEF53, "/x": 0xEF53})
	r := registryWith("ufs")
	for _, p := range []string{"./a:b", "/x/y:z"} {
		d, path, err := r.resolve(p, 0)
		require.NoError(t, err, p)
		assert.Equal(t, "ufs", d.Name())
		assert.Equal(t, p, path, "the path is passed on unchanged")
	}
}

func TestResolveDetectsRegisteredFS(t *testing.T) {
	fakeStatfs(t, map[string]uint32{"/mnt/lustre/f": magicLustre, "/mnt/bee": magicBeeGFS})
	r := registryWith("ufs", "lustre", "beegfs")
	d, path, err := r.resolve("/mnt/lustre/f", 0)
	require.NoError(t, err)
	assert.Equal(t, "lustre", d.Name())
	assert.Equal(t, "/mnt/lustre/f", path)

	d, _, err = r.resolve("/mnt/bee/new/file", 0)
	require.NoError(t, err)
	assert.Equal(t, "beegfs", d.Name())
}

func TestResolveUnregisteredDetectedFSFallsBackToUFS(t *testing.T) {
	fakeStatfs(t, map[string]uint32{"/mnt/lustre/f": magicLustre, "/nfs": magicNFS})
	r := registryWith("ufs")
	d, path, err := r.resolve("/mnt/lustre/f", 0)
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
	assert.Equal(t, "/mnt/lustre/f", path)

	name, err := DetectFSName("/mnt/lustre/f")
	require.NoError(t, err)
	assert.Equal(t, "lustre", name, "DetectFSName reports the file system itself")

	d, _, err = r.resolve("/nfs/f", 0)
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
}

func TestResolveWithoutUFSIsAnError(t *testing.T) {
	fakeStatfs(t, map[string]uint32{"/": 0xEF53})
	_, _, err := newRegistry().resolve("/f", 0)
	assert.ErrorIs(t, err, unix.EOPNOTSUPP)
	assert.Contains(t, err.Error(), "registered drivers: none")
}

func TestDetectWalksUpToNearestExistingAncestor(t *testing.T) {
	asked := fakeStatfs(t, map[string]uint32{"/mnt/bee": magicBeeGFS, "/": 0xEF53, ".": 0xEF53})
	name, err := DetectFSName("/mnt/bee/a/b/new.dat")
	require.NoError(t, err)
	assert.Equal(t, "beegfs", name)
	assert.Equal(t, []string{"/mnt/bee/a/b/new.dat", "/mnt/bee/a/b", "/mnt/bee/a", "/mnt/bee"}, *asked)

	*asked = nil
	name, err = DetectFSName("rel/dir/f")
	require.NoError(t, err, "a relative path ends at \".\"")
	assert.Equal(t, "ufs", name)
	assert.Equal(t, []string{"rel/dir/f", "rel/dir", "rel", "."}, *asked)
}

func TestDetectMapsMagics(t *testing.T) {
	fakeStatfs(t, map[string]uint32{
		"/l": magicLustre, "/b": magicBeeGFS, "/n": magicNFS, "/g": magicGPFS,
		"/ext4": 0xEF53, "/tmpfs": 0x01021994, "/xfs": 0x58465342,
	})
	want := map[string]string{"/l": "lustre", "/b": "beegfs", "/n": "nfs", "/g": "gpfs",
		"/ext4": "ufs", "/tmpfs": "ufs", "/xfs": "ufs"}
	for path, fs := range want {
		got, err := DetectFSName(path)
		require.NoError(t, err)
		assert.Equal(t, fs, got, path)
	}
}

func TestDetectReportsErrorsOtherThanMissing(t *testing.T) {
	saved := fsMagic
	t.Cleanup(func() { fsMagic = saved })
	fsMagic = func(path string) (uint32, error) {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: unix.EACCES}
	}
	_, err := DetectFSName("/secret/f")
	assert.True(t, errors.Is(err, unix.EACCES))
}

func TestDetectRealFileSystem(t *testing.T) {
	dir := t.TempDir()
	// Whatever /tmp is, a new file below it resolves like the directory.
	want, err := DetectFSName(dir)
	require.NoError(t, err)
	got, err := DetectFSName(filepath.Join(dir, "not", "yet", "there"))
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// A path under a regular file (ENOTDIR) is judged by the file's directory.
	f := filepath.Join(dir, "regular")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	got, err = DetectFSName(filepath.Join(f, "below"))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// Probe asks the file system once for a plain path and never for a
// prefixed one, whose prefix it still checks; ResolveKnown then resolves
// with the probe's magic and asks nothing.
func TestProbeThenResolveKnownAsksOnce(t *testing.T) {
	asked := fakeStatfs(t, map[string]uint32{"/mnt/lustre": magicLustre})
	saved := defaultRegistry
	t.Cleanup(func() { defaultRegistry = saved })
	defaultRegistry = registryWith("ufs", "lustre")

	magic, err := Probe("/mnt/lustre/new")
	require.NoError(t, err)
	assert.Equal(t, magicLustre, magic)
	assert.Equal(t, []string{"/mnt/lustre/new", "/mnt/lustre"}, *asked)

	*asked = nil
	d, path, err := ResolveKnown("/mnt/lustre/new", magic)
	require.NoError(t, err)
	assert.Equal(t, "lustre", d.Name())
	assert.Equal(t, "/mnt/lustre/new", path)
	assert.Empty(t, *asked, "a known magic needs no statfs")

	magic, err = Probe("ufs:/mnt/lustre/new")
	require.NoError(t, err)
	assert.Zero(t, magic, "the prefix chooses the driver")
	d, path, err = ResolveKnown("ufs:/mnt/lustre/new", magic)
	require.NoError(t, err)
	assert.Equal(t, "ufs", d.Name())
	assert.Equal(t, "/mnt/lustre/new", path)
	assert.Empty(t, *asked)

	_, err = Probe("nosuchfs:/x")
	assert.ErrorIs(t, err, unix.EINVAL, "an unknown prefix is Probe's error")
	assert.Empty(t, *asked)
}
