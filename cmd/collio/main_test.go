package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/collio/collio/cache"
	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/faulty"
	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/require"
)

// A cache whose copy failed (ENOSPC) leaves its journal; collio recover
// completes the global file and removes the cache.
func TestRecover(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "out")
	g, err := faulty.New(ufs.New(), faulty.NoSpaceAfter(10)).Open(path,
		driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Perm: 0o644})
	require.NoError(t, err)
	c, err := cache.Open(g, cache.Options{GlobalPath: path, Dir: dir, Policy: cache.FlushOnClose, Discard: true})
	require.NoError(t, err)
	want := bytes.Repeat([]byte("collio"), 100)
	_, err = c.WriteAt(want[:300], 0)
	require.NoError(t, err)
	_, err = c.WriteAt(want[300:], 300)
	require.NoError(t, err)
	require.ErrorIs(t, c.Close(), syscall.ENOSPC)

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"recover", "-n", dir}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "would copy (2 writes, 600 bytes)")
	out.Reset()
	require.Equal(t, 0, run([]string{"recover", dir}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "copied (2 writes, 600 bytes) -> "+path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	es, _ := os.ReadDir(dir)
	require.Empty(t, es)
	out.Reset()
	require.Equal(t, 0, run([]string{"recover", dir}, &out, &errOut))
	require.Contains(t, out.String(), "no cache journals")
	require.Equal(t, 2, run(nil, &out, &errOut))
	require.Equal(t, 1, run([]string{"recover", filepath.Join(dir, "missing")}, &out, &errOut))
}
