package ufs

import (
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How long a lock that should be granted may take, and how long we watch
// one that should stay blocked.
const (
	grantWithin  = 5 * time.Second
	blockedCheck = 150 * time.Millisecond
)

// twoOpens opens the same file twice, as two ranks of one process would.
func twoOpens(t *testing.T) (*file, *file) {
	t.Helper()
	f1, path := openNew(t)
	return f1, openPath(t, path, driver.ORdWr)
}

// lockAsync starts Lock in a goroutine and returns its result channel.
func lockAsync(f *file, off, length int64, exclusive bool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.Lock(off, length, exclusive) }()
	return done
}

func requireGranted(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(grantWithin):
		t.Fatal("lock not granted")
	}
}

func requireBlocked(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("lock granted while a conflicting lock is held (err=%v)", err)
	case <-time.After(blockedCheck):
	}
}

func TestExclusiveLockBlocksOtherOpenUntilUnlock(t *testing.T) {
	f1, f2 := twoOpens(t)
	require.NoError(t, f1.Lock(0, 100, true))

	waiting := lockAsync(f2, 50, 10, true)
	requireBlocked(t, waiting)

	require.NoError(t, f1.Unlock(0, 100))
	requireGranted(t, waiting)
	require.NoError(t, f2.Unlock(50, 10))
}

func TestSharedLocksCoexistButBlockExclusive(t *testing.T) {
	f1, f2 := twoOpens(t)
	require.NoError(t, f1.Lock(0, 0, false))
	requireGranted(t, lockAsync(f2, 10, 10, false))
	require.NoError(t, f2.Unlock(10, 10))

	writer := lockAsync(f2, 10, 10, true)
	requireBlocked(t, writer)
	require.NoError(t, f1.Unlock(0, 0))
	requireGranted(t, writer)
}

func TestDisjointRangesDoNotBlock(t *testing.T) {
	f1, f2 := twoOpens(t)
	require.NoError(t, f1.Lock(0, 100, true))
	requireGranted(t, lockAsync(f2, 100, 100, true))
}

func TestZeroLengthLocksToEndOfFile(t *testing.T) {
	f1, f2 := twoOpens(t)
	require.NoError(t, f1.Lock(1000, 0, true))
	requireGranted(t, lockAsync(f2, 0, 1000, true))

	far := lockAsync(f2, 1<<40, 1, true)
	requireBlocked(t, far)
	require.NoError(t, f1.Close(), "closing the file releases its locks")
	requireGranted(t, far)
}

func TestLockAndUnlockOnSameOpenDoNotConflict(t *testing.T) {
	f1, _ := openNew(t)
	require.NoError(t, f1.Lock(0, 10, true))
	requireGranted(t, lockAsync(f1, 0, 10, true))
	assert.NoError(t, f1.Unlock(0, 10))
}
