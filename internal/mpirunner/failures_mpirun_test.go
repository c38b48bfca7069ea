//go:build cgo

package mpirunner_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/mpirunner"
)

// envBeforeInit is this process's environment before TestMain's MPI_Init,
// which may add a singleton's variables that a child mpirun must not see.
var envBeforeInit = os.Environ()

// TestFailuresUnderMpirun launches this test binary's deliberate failures
// (demo_test.go) on 3 ranks through scripts/mpiexec.sh, as tier 2 launches
// the MPI packages, and checks the harness's failure paths, which passing
// tests never take: a failing rank fails the job with its rank and message
// named, and a stuck rank gets the job aborted within a bounded time.
// It runs in the unit tier, where this binary is a singleton; under mpirun
// it skips, as every rank would start jobs of its own.
func TestFailuresUnderMpirun(t *testing.T) {
	if mpirunner.Size() > 1 {
		t.Skip("launches mpirun itself; runs in the unit tier (go test ./internal/mpirunner)")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("no mpirun in PATH: the harness's failure paths under mpirun are not checked")
	}
	script, err := filepath.Abs("../../scripts/mpiexec.sh")
	require.NoError(t, err)
	// launch runs the tests matching run and returns mpirun's exit code,
	// its output (stdout and stderr) and how long it took.
	launch := func(run string, env ...string) (int, string, time.Duration) {
		t.Helper()
		// mpirun kills a job still running after MPIRUN_TIMEOUT; the
		// context is the last resort, with SIGTERM, which mpirun passes on
		// to the ranks (SIGKILL would leave them behind).
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, os.Args[0], "-test.run", run, "-test.timeout", "2m")
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		cmd.Env = slices.Concat(envBeforeInit, []string{"MPI_NP=3", "MPIRUN_TIMEOUT=60", "MPITEST_DEMO_FAIL=1", "TMPDIR=" + t.TempDir(),
			"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}, env)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		require.NoError(t, ctx.Err(), "mpirun was still running after %v; output:\n%s", took, out)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out), took
		}
		require.NoError(t, err, string(out))
		return 0, string(out), took
	}

	t.Run("failing rank", func(t *testing.T) {
		code, out, _ := launch("^TestDemo(ErrorOnOneRank|PanicOnOneRank|PlainFailure)$")
		require.Equal(t, 1, code, out)
		for _, want := range []string{
			// Every rank fails the Run tests, with rank 2's first message.
			`--- FAIL: TestDemoErrorOnOneRank .*\n.*test failed on ranks \[2\] \(rank 2: demo_test\.go:\d+: deliberate failure on rank 2\)`,
			`--- FAIL: TestDemoPanicOnOneRank .*\n.*test failed on ranks \[2\] \(rank 2: .*panic in the test body: assignment to entry in nil map\)`,
			// A failure outside Run shows only in rank 2's replayed log.
			`\[rank 2\] .*deliberate failure outside mpirunner\.Run on rank 2`,
			`(?m)^mpirunner: tests failed on ranks \[0 1 2\]$`, // every rank failed a test
			`(?m)^FAIL$`,
		} {
			require.Regexp(t, regexp.MustCompile(want), out)
		}
		// Ranks that failed only because rank 2 did have nothing to replay.
		require.NotContains(t, out, "[rank 1]")
	})

	// MPITEST_AGREE_TIMEOUT bounds how long a rank waits for the others;
	// the job must end soon after it, well before mpirun's own timeout.
	const agree = 2 * time.Second
	const bound = 30 * time.Second
	t.Run("stuck rank", func(t *testing.T) {
		code, out, took := launch("^TestDemoHangOnOneRank$", "MPITEST_AGREE_TIMEOUT="+agree.String())
		require.Equal(t, 1, code, out)
		require.Less(t, took, bound, out)
		// Rank 2 sleeps; whichever of the others gives up first aborts.
		require.Regexp(t, `mpirunner: rank [01]: test TestDemoHangOnOneRank could not agree with the other ranks; aborting the job`, out)
	})
	t.Run("rank leaves before a collective", func(t *testing.T) {
		code, out, took := launch("^TestDemoFatalBeforeCollective$", "MPITEST_AGREE_TIMEOUT="+agree.String())
		require.Equal(t, 1, code, out)
		require.Less(t, took, bound, out)
		require.Regexp(t, `\[rank 2\] .*deliberate t\.Fatal on rank 2 before a barrier`, out)
		require.Contains(t, out, "mpirunner: rank 2: test TestDemoFatalBeforeCollective could not agree with the other ranks; aborting the job")
		require.False(t, strings.Contains(out, "mpirunner: tests failed on ranks"), "aborted before the final agreement:\n%s", out)
	})
}
