package ufs

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A known magic answers without asking the file system (the directory
// here does not exist); without one the directory is asked.
func TestIncoherentCachesByMagic(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "f")
	const fuseMagic, ext4Magic = 0x65735546, 0xEF53
	require.Contains(t, New().(ufsDriver).IncoherentCaches(missing, fuseMagic), "FUSE")
	require.Empty(t, New().(ufsDriver).IncoherentCaches(missing, ext4Magic))
	require.Empty(t, New().(ufsDriver).IncoherentCaches(missing, 0), "a directory that cannot be asked tells nothing")
}
