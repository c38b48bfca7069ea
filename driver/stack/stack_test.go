package stack_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/stack"
	_ "github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/hints"
	"github.com/stretchr/testify/require"
)

func hintSet(t *testing.T, kv map[string]string) *hints.Set {
	t.Helper()
	h, err := hints.Resolve(kv, hints.Options{Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return h
}

func TestBuildResolvesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	s, err := stack.Build(nil, "ufs:"+path)
	require.NoError(t, err)
	require.Equal(t, "ufs", s.Driver().Name())
	require.Equal(t, path, s.Path())
	require.False(t, s.Servers())

	_, err = stack.Build(nil, "nosuchfs:"+path)
	require.ErrorContains(t, err, `unknown file-system prefix "nosuchfs:"`)
}

func open(t *testing.T, s *stack.Stack) driver.File {
	t.Helper()
	f, err := s.Open(driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Perm: 0o644})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCacheOnlyWhenAsked(t *testing.T) {
	s, err := stack.Build(nil, filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	c, wanted := s.OpenCache(open(t, s), hintSet(t, nil), 0, nil, nil)
	require.False(t, wanted)
	require.Nil(t, c)
}

func TestCacheUsedOrDropped(t *testing.T) {
	dir := t.TempDir()
	s, err := stack.Build(nil, filepath.Join(dir, "f"))
	require.NoError(t, err)
	h := hintSet(t, map[string]string{hints.E10Cache: hints.Enable, hints.E10CachePath: t.TempDir()})

	f := open(t, s)
	c, wanted := s.OpenCache(f, h, 0, nil, nil)
	require.True(t, wanted)
	require.NoError(t, c.Err())
	cf := c.Use()
	require.NotNil(t, cf)
	_, ok := driver.WriteBackOf(cf)
	require.True(t, ok, "the cache holds writes back")
	c.Drop()
	_, err = f.WriteAt([]byte("x"), 0) // the file under it is the caller's again
	require.NoError(t, err)

	// A rank that deferred its open has no cache, and no error.
	c, wanted = s.OpenCache(nil, h, 1, nil, nil)
	require.True(t, wanted)
	require.NoError(t, c.Err())
	require.Nil(t, c.Use())
	c.Drop()
}

// A cache directory every user may write, without the sticky bit, is
// refused as unsafe.
func TestCacheUnsafe(t *testing.T) {
	s, err := stack.Build(nil, filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	h := hintSet(t, map[string]string{hints.E10Cache: hints.Enable, hints.E10CachePath: dir})
	c, wanted := s.OpenCache(open(t, s), h, 0, nil, nil)
	require.True(t, wanted)
	require.Error(t, c.Err())
	require.True(t, c.Unsafe())
	require.Nil(t, c.Use())
}
