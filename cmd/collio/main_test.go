package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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

// journalHeader is a journal without records, as the cache writes it
// (cache/journal.go): nothing pending, so recover goes straight to
// deleting the cache file it names.
func journalHeader(global, cachePath string, st *syscall.Stat_t) []byte {
	b := []byte("COLLIOJ1")
	b = binary.LittleEndian.AppendUint32(b, 1) // discard
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Dev))
	b = binary.LittleEndian.AppendUint64(b, st.Ino)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(global)))
	b = append(b, global...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cachePath)))
	b = append(b, cachePath...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// collio recover deletes only the cache file beside a journal: a journal
// that names another file, and a symbolic link at a journal's name, fail
// with the path and the reason, and the files they point to stay.
func TestRecoverLeavesForeignPaths(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.WriteFile(global, []byte("data"), 0o644))
	victim := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(victim, []byte("keep me"), 0o644))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(global, &st))
	_, jp := cache.Names(dir, global, 0)
	require.NoError(t, os.WriteFile(jp, journalHeader(global, victim, &st), 0o600))
	link := filepath.Join(dir, "other.0badf00d.r1.journal")
	require.NoError(t, os.Symlink(victim, link))

	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"recover", dir}, &out, &errOut), out.String())
	require.Contains(t, errOut.String(), jp+": the journal names the cache file "+victim+", not ")
	require.Contains(t, errOut.String(), link+": the journal is a symbolic link")
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(got))
	require.FileExists(t, jp)
}
