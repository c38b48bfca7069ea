package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/require"
)

// Another user is simulated by chown to nobody; these tests need root
// for that (CI runs as root).
const otherUID = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("simulating another user's files needs root (chown)")
	}
}

// sharedDir is a node-local directory every user may write, as /tmp.
func sharedDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	require.NoError(t, os.Chmod(d, 0o777|os.ModeSticky))
	return d
}

// victim is a file of the user that an attacker wants overwritten or
// deleted.
func victim(t *testing.T) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "precious")
	want := []byte("the user's own data, not to be touched")
	require.NoError(t, os.WriteFile(p, want, 0o644))
	return p, want
}

// plantSymlink makes another user's symbolic link at name to target.
func plantSymlink(t *testing.T, target, name string) {
	t.Helper()
	require.NoError(t, os.Symlink(target, name))
	require.NoError(t, os.Lchown(name, otherUID, otherUID))
}

// globalWithData is a global file holding data, open for the cache.
func globalWithData(t *testing.T) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out")
	want := bytes.Repeat([]byte("global"), 50)
	require.NoError(t, os.WriteFile(p, want, 0o644))
	return p, want
}

// pending is a journalled write of [0, 100) no checkpoint covers.
var pending = record{kind: kindWrite, seq: 1, off: 0, len: 100}

// plantJournal writes a journal for global on rank 0 in dir with recs,
// naming cachePath and id, owned by uid.
func plantJournal(t *testing.T, dir, global, cachePath string, id identity, uid int, recs ...record) string {
	t.Helper()
	_, jp := Names(dir, global, 0)
	b := journalBytes(global, cachePath, true, id, recs...)
	require.NoError(t, os.WriteFile(jp, b, 0o600))
	require.NoError(t, os.Chown(jp, uid, uid))
	return jp
}

// A symbolic link planted at the cache file's name in a shared directory
// is refused: the open fails naming the link, and the file it points to
// keeps its data (before, it was truncated and overwritten). Once the
// link is gone the same shared directory works.
func TestPlantedSymlinkAtCacheName(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	target, want := victim(t)
	path, gwant := globalWithData(t)
	cp, _ := Names(dir, path, 0)
	plantSymlink(t, target, cp)
	c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir, Discard: true})
	if err == nil {
		c.WriteAt([]byte("attacker gets this"), 0)
		c.Close()
	}
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, cp+": the cache file is a symbolic link")
	require.Equal(t, want, readOS(t, target))
	require.Equal(t, gwant, readOS(t, path))

	require.NoError(t, os.Remove(cp))
	c, err = Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir, Discard: true})
	require.NoError(t, err)
	_, err = c.WriteAt([]byte("mine"), 0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, "mine", string(readOS(t, path)[:4]))
}

// A symbolic link planted at the journal's name is refused, and its
// target is neither read as a journal nor rewritten as one.
func TestPlantedSymlinkAtJournalName(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	target, want := victim(t)
	path, gwant := globalWithData(t)
	_, jp := Names(dir, path, 0)
	plantSymlink(t, target, jp)
	c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir, Discard: true})
	if err == nil {
		c.Close()
	}
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, jp+": the journal is a symbolic link")
	require.Equal(t, want, readOS(t, target))
	require.Equal(t, gwant, readOS(t, path))
}

// A journal with pending writes planted by another user, or one that
// names a cache file elsewhere than beside it, is never replayed: the
// open fails naming it, and the global file keeps its data (before, the
// named file's bytes were copied into it).
func TestPlantedJournalNamesForeignCache(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name string
		uid  int
		want string
	}{
		{"other user's", otherUID, "the journal is owned by uid 65534, not by this user (uid 0)"},
		{"own, cache elsewhere", 0, "the journal names the cache file "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sharedDir(t)
			foreign := filepath.Join(t.TempDir(), "foreign.cache")
			require.NoError(t, os.WriteFile(foreign, bytes.Repeat([]byte("X"), 100), 0o644))
			path, gwant := globalWithData(t)
			jp := plantJournal(t, dir, path, foreign, identityOf(path), tc.uid, pending)
			var warned []string
			c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir, Discard: true,
				Warn: func(s string) { warned = append(warned, s) }})
			if err == nil {
				c.Close()
			}
			require.ErrorIs(t, err, ErrUnsafe)
			require.ErrorContains(t, err, jp+": "+tc.want)
			require.Equal(t, gwant, readOS(t, path))
			require.Empty(t, warned)
		})
	}
}

// A journal without the global file's device and inode would skip the
// check that the global file was not replaced: it is refused, at open and
// by Recover, and nothing is copied.
func TestZeroIdentityJournalRefused(t *testing.T) {
	dir := t.TempDir()
	path, gwant := globalWithData(t)
	cp, _ := Names(dir, path, 0)
	require.NoError(t, os.WriteFile(cp, bytes.Repeat([]byte("Z"), 100), 0o600))
	jp := plantJournal(t, dir, path, cp, identity{}, os.Geteuid(), pending)

	out, err := Recover(dir, RecoverOptions{})
	require.ErrorIs(t, err, ErrUnsafe)
	require.Len(t, out, 1)
	require.Contains(t, out[0].Status, "failed: cache: refusing "+jp+": the journal records no device and inode")
	require.Equal(t, gwant, readOS(t, path))
	require.FileExists(t, cp)

	c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir, Discard: true})
	if err == nil {
		c.Close()
	}
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, jp+": the journal records no device and inode")
	require.Equal(t, gwant, readOS(t, path))
}

// Recover deletes only the cache file beside a journal, and only this
// user's: a journal naming another file as its cache fails, another
// user's journal is skipped, and the named file stays (before, Recover
// deleted whatever path a journal named).
func TestRecoverDoesNotDeleteForeignPath(t *testing.T) {
	needRoot(t)
	dir := sharedDir(t)
	target, want := victim(t)
	mine, _ := globalWithData(t)
	theirs, _ := globalWithData(t)
	// Nothing pending: Recover goes straight to deleting the cache file.
	jMine := plantJournal(t, dir, mine, target, identityOf(mine), os.Geteuid())
	jTheirs := plantJournal(t, dir, theirs, target, identityOf(theirs), otherUID)
	out, err := Recover(dir, RecoverOptions{})
	require.ErrorIs(t, err, ErrUnsafe)
	require.Equal(t, want, readOS(t, target))
	status := map[string]string{}
	for _, r := range out {
		status[r.Journal] = r.Status
	}
	require.Contains(t, status[jMine], "failed: cache: refusing "+jMine+": the journal names the cache file "+target)
	require.Equal(t, "skipped: owned by uid 65534, not by this user (uid 0)", status[jTheirs])
	require.FileExists(t, jTheirs)
}

// With no e10_cache_path the cache goes to a directory of the user's own
// (0700) under TMPDIR, not into TMPDIR itself, which every user shares.
// That directory, if someone else made it first, or made it writable to
// others, is refused.
func TestDefaultDirIsPrivate(t *testing.T) {
	needRoot(t)
	tmp := sharedDir(t)
	t.Setenv("TMPDIR", tmp)
	path, _ := globalWithData(t)
	c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Discard: true})
	require.NoError(t, err)
	dir := filepath.Dir(c.CachePath())
	require.NoError(t, c.Close())
	require.NotEqual(t, tmp, dir, "the cache is in the shared TMPDIR itself")
	require.Equal(t, tmp, filepath.Dir(dir))
	st, err := os.Lstat(dir)
	require.NoError(t, err)
	require.True(t, st.IsDir())
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	require.Equal(t, uint32(os.Geteuid()), st.Sys().(*syscall.Stat_t).Uid)

	// Someone else made the name first.
	tmp2 := sharedDir(t)
	t.Setenv("TMPDIR", tmp2)
	taken := filepath.Join(tmp2, filepath.Base(dir))
	require.NoError(t, os.Mkdir(taken, 0o777))
	require.NoError(t, os.Chown(taken, otherUID, otherUID))
	_, err = Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Discard: true})
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, taken+": the default cache directory is owned by uid 65534")
	es, _ := os.ReadDir(taken)
	require.Empty(t, es)
}

// An explicit cache directory that every user may write without the
// sticky bit is refused: anyone could rename or delete the cache files.
func TestWorldWritableDirWithoutStickyRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	path, gwant := globalWithData(t)
	c, err := Open(openG(t, ufs.New(), path), Options{GlobalPath: path, Dir: dir})
	if err == nil {
		c.Close()
	}
	require.ErrorIs(t, err, ErrUnsafe)
	require.ErrorContains(t, err, dir+": the cache directory (e10_cache_path) is writable by every user without the sticky bit (mode 0777)")
	require.Equal(t, gwant, readOS(t, path))
}

// The user's own leftovers still work: a cache file kept by
// e10_cache_discard_flag=disable is replaced at the next open, and a
// journal an open left behind when its process died is replayed from the
// cache file beside it.
func TestOwnLeftoversStillUsed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "g")
	opts := Options{GlobalPath: path, Dir: dir, Policy: FlushOnClose}
	for i := range 2 {
		c, err := Open(openG(t, ufs.New(), path), opts)
		require.NoError(t, err, "open %d", i)
		_, err = c.WriteAt([]byte("pass"+strconv.Itoa(i)), 0)
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	require.Equal(t, "pass1", string(readOS(t, path)))

	c, err := Open(openG(t, ufs.New(), path), opts)
	require.NoError(t, err)
	_, err = c.WriteAt([]byte("crash"), 0)
	require.NoError(t, err)
	require.NoError(t, c.journal.f.Close()) // the process dies
	c2, err := Open(openG(t, ufs.New(), path), opts)
	require.NoError(t, err)
	require.Equal(t, "crash", string(readOS(t, path)))
	require.NoError(t, c2.Close())
}
