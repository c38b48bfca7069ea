package cache

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/collio/collio/driver/faulty"
	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/require"
)

// A copy error that Sync returned, whose flush_immediate retry right after
// that Sync fails too (the global file system still full), and whose retry
// at Close then succeeds: Close returns nil, as every byte reached the
// global file and the cache is gone; the caller already had the error.
// (Close used to return the failed retry's error, naming a cache file it
// had just deleted; found by the disk-full test, TestDiskFull.)
func TestReportedCopyErrorNotRepeatedByClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g")
	// Copies 1 and 3 succeed; 2 (extent B) fails, and so does 4 (B's retry).
	drv := faulty.New(ufs.New(), faulty.EIOOnCall(faulty.OpWrite, 2), faulty.EIOOnCall(faulty.OpWrite, 4))
	opts := newOpts(t, path, FlushImmediate, 1)
	c, err := Open(openG(t, drv, path), opts)
	require.NoError(t, err)
	var m model
	for i := 0; i < 3; i++ {
		m.put(t, c, pattern(i, 1000), int64(i)*5000)
		c.Drain() // one copy per write, in order
	}
	require.ErrorIs(t, c.Sync(), syscall.EIO)
	// Wait for the retry that follows the Sync to fail.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, _ := StatsOf(c)
		if s.CopyErrors >= 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the retry after Sync never ran")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, c.Close())
	require.Equal(t, []byte(m), readOS(t, path))
	require.Empty(t, dirEntries(t, opts.Dir))
}
