package gocores

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// candidates is listed while the test binary initialises, as the C
// library lists its own: the runtime runs init on the thread it created
// before its monitor.
var candidates = FindMonitor()

func TestQuietMonitorFindsTheRuntimeMonitor(t *testing.T) {
	require.NotEmpty(t, candidates)
	base := niceOf(t, unix.Getpid()) // the test may itself run under nice
	// On a loaded machine one sampling may miss it; the C library tries
	// again at its next opens.
	tid := 0
	for try := 0; try < 3 && tid == 0; try++ {
		tid = candidates.Quiet()
	}
	require.NotZero(t, tid, "the monitor among %v", candidates)
	require.Equal(t, uint32(unix.SCHED_BATCH), policyOf(t, tid))
	require.Equal(t, uint32(unix.SCHED_NORMAL), policyOf(t, unix.Getpid()), "the main thread")
	require.Contains(t, candidates, tid)
	for _, other := range tasks() {
		require.Equal(t, base, niceOf(t, other), "thread %d: nice values are left alone", other)
	}
}

func TestQuietWithoutCandidates(t *testing.T) {
	quieted.Lock()
	saved := quieted.tid
	quieted.tid = 0
	quieted.Unlock()
	defer func() { quieted.tid = saved }()
	require.Zero(t, Monitor(nil).Quiet())
}

func TestMonitorFind(t *testing.T) {
	// Scripted thread states, sample by sample: n nanosleep, r running
	// or runnable, f futex, p poll, x gone.
	states := func(script map[int]string) func(int) (int, bool) {
		next := map[int]int{}
		return func(tid int) (int, bool) {
			s := script[tid]
			c := s[next[tid]%len(s)]
			next[tid]++
			switch c {
			case 'n':
				return unix.SYS_NANOSLEEP, true
			case 'f':
				return unix.SYS_FUTEX, true
			case 'p':
				return unix.SYS_POLL, true
			}
			return 0, false
		}
	}
	m := Monitor{11, 12, 13}
	for _, c := range []struct {
		name   string
		script map[int]string
		want   int
	}{
		{"one sleeper", map[int]string{11: "p", 12: "n", 13: "f"}, 12},
		{"asleep a quarter of the time", map[int]string{11: "nrrf", 12: "f", 13: "p"}, 11},
		{"asleep an eighth of the time is too little", map[int]string{11: "nrrrrrrr", 12: "f", 13: "p"}, 0},
		{"running is not asleep", map[int]string{11: "r", 12: "f", 13: "p"}, 0},
		{"two sleepers: neither", map[int]string{11: "n", 12: "nnrr", 13: "f"}, 0},
		{"a short nanosleep elsewhere", map[int]string{11: "n", 12: "nrrrrrrr", 13: "f"}, 11},
		{"none", map[int]string{11: "f", 12: "p", 13: "x"}, 0},
		{"gone threads are skipped", map[int]string{11: "x", 12: "n", 13: "x"}, 12},
	} {
		require.Equal(t, c.want, m.find(8, 0, states(c.script)), c.name)
	}
}

func policyOf(t *testing.T, tid int) uint32 {
	attr, err := unix.SchedGetAttr(tid, 0)
	require.NoError(t, err)
	return attr.Policy
}

func niceOf(t *testing.T, tid int) int {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	require.NoError(t, err)
	// Fields after the command name (which may hold spaces): state is the
	// third field of stat, nice the nineteenth.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	nice, err := strconv.Atoi(fields[19-3])
	require.NoError(t, err)
	return nice
}

// RestoreMonitor puts a quieted monitor back under SCHED_NORMAL, and Quiet
// does not quiet it again afterwards.
func TestRestoreMonitor(t *testing.T) {
	defer func() { quieted.restored = false }()
	tid := 0
	for try := 0; try < 3 && tid == 0; try++ {
		tid = candidates.Quiet()
	}
	require.NotZero(t, tid)
	require.Equal(t, uint32(unix.SCHED_BATCH), policyOf(t, tid))
	require.True(t, RestoreMonitor())
	require.Equal(t, uint32(unix.SCHED_NORMAL), policyOf(t, tid))
	require.Zero(t, candidates.Quiet(), "quieted again after RestoreMonitor")
	require.Equal(t, uint32(unix.SCHED_NORMAL), policyOf(t, tid))
	require.False(t, RestoreMonitor(), "nothing left to restore")
}
