package faulty

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type crashed struct{}

// catchCrash makes crash panic with crashed{} and returns whether fn
// crashed.
func catchCrash(t *testing.T, fn func()) (did bool) {
	t.Helper()
	old := crash
	crash = func() { panic(crashed{}) }
	defer func() {
		crash = old
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			did = true
		}
	}()
	fn()
	return false
}

// The K-th call crashes, before it reaches the file; earlier calls and
// the runs of a batch before the crashing one were written.
func TestCrashOnCall(t *testing.T) {
	f, path := openWith(t, CrashOnCall(OpWrite, 2))
	assert.False(t, catchCrash(t, func() { f.WriteAt([]byte("ab"), 0) }))
	assert.True(t, catchCrash(t, func() { f.WriteAt([]byte("cd"), 2) }))
	assert.Equal(t, int64(2), fileSize(t, path))

	f, path = openWith(t, CrashOnCall(OpWrite, 3))
	runs := []driver.Run{{Off: 0, Bufs: [][]byte{[]byte("ab")}}, {Off: 4, Bufs: [][]byte{[]byte("cd")}},
		{Off: 8, Bufs: [][]byte{[]byte("ef")}}}
	assert.True(t, catchCrash(t, func() { f.(driver.RunWriter).WriteRuns(runs) }))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, []byte("ab\x00\x00cd"), got)

	f, _ = openWith(t, CrashOnCall(OpAny, 2))
	assert.False(t, catchCrash(t, func() { f.Size() }))
	assert.True(t, catchCrash(t, func() { f.Sync() }))

	assert.True(t, catchCrash(t, func() { New(ufs.New(), CrashOnCall(OpOpen, 1)).Open(filepath.Join(t.TempDir(), "g"), rw()) }))
}

// Outside tests that replace it, a crash is the process killed by SIGKILL.
func TestCrashKillsTheProcess(t *testing.T) {
	if path := os.Getenv("FAULTY_CRASH_CHILD"); path != "" {
		f, err := New(ufs.New(), CrashOnCall(OpWrite, 1)).Open(path, rw())
		if err == nil {
			f.WriteAt([]byte("x"), 0)
		}
		os.Exit(3) // not reached
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKillsTheProcess$")
	cmd.Env = append(os.Environ(), "FAULTY_CRASH_CHILD="+filepath.Join(t.TempDir(), "f"))
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child ended with %v", err)
}
