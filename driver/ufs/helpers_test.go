package ufs

import (
	"path/filepath"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/require"
)

// openNew creates a fresh read-write file in a temp dir and closes it when
// the test ends.
func openNew(t *testing.T) (*file, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	return openPath(t, path, driver.ORdWr|driver.OCreate), path
}

func openPath(t *testing.T, path string, flags int) *file {
	t.Helper()
	df, err := New().Open(path, driver.OpenOptions{Flags: flags})
	require.NoError(t, err)
	t.Cleanup(func() { df.Close() })
	return df.(*file)
}

// pattern returns n bytes that differ with position and seed, so that
// misplaced data shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}
