//go:build cgo

package collio_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/collio/collio"
)

// TestShareCoresQuietsMonitor: ShareCores moves the Go runtime's monitor
// thread (and only runtime threads) to SCHED_BATCH; internal/gocores tests
// how it is found.
func TestShareCoresQuietsMonitor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	batch := 0
	for try := 0; try < 3 && batch == 0; try++ { // a loaded machine may hide it from one sampling
		collio.ShareCores()
		batch = 0
		ents, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			require.NoError(t, err)
			attr, err := unix.SchedGetAttr(tid, 0)
			if err != nil {
				continue // the thread ended
			}
			if attr.Policy == unix.SCHED_BATCH {
				batch++
			}
		}
	}
	require.GreaterOrEqual(t, batch, 1)
	attr, err := unix.SchedGetAttr(os.Getpid(), 0)
	require.NoError(t, err)
	require.Equal(t, uint32(unix.SCHED_NORMAL), attr.Policy, "the main thread")
}
