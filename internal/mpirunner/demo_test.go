//go:build cgo

package mpirunner_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// Deliberate failures that show what a failing MPI test looks like. They
// are skipped unless MPITEST_DEMO_FAIL=1:
//
//	MPITEST_DEMO_FAIL=1 MPITEST_AGREE_TIMEOUT=5s MPI_NP=4 \
//	  go test -count=1 -p 1 -exec "$PWD/scripts/mpiexec.sh" -run Demo ./internal/mpirunner/
//
// Expected: TestDemoErrorOnOneRank and TestDemoPanicOnOneRank fail on every
// rank with "test failed on ranks [2]" and rank 2's message; the plain test
// fails only on rank 2, whose log is replayed as "[rank 2] ..."; then
// TestDemoFatalBeforeCollective leaves rank 2's peers blocked in a
// barrier, and the job is aborted about MPITEST_AGREE_TIMEOUT later
// instead of hanging. Exit code 1. TestDemoHangOnOneRank (run it with
// -run) has rank 2 stuck outside MPI; the other ranks abort the job.
// TestFailuresUnderMpirun runs these and checks what they print.
func demo(t *testing.T) int {
	if os.Getenv("MPITEST_DEMO_FAIL") != "1" {
		t.Skip("deliberate failure; set MPITEST_DEMO_FAIL=1 to see it")
	}
	return min(2, mpirunner.Size()-1) // the rank that fails
}

func TestDemoErrorOnOneRank(t *testing.T) {
	bad := demo(t)
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		require.NoError(t, c.Barrier())
		if c.Rank() == bad {
			t.Errorf("deliberate failure on rank %d", c.Rank())
		}
	})
}

func TestDemoPanicOnOneRank(t *testing.T) {
	bad := demo(t)
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		require.NoError(t, c.Barrier())
		if c.Rank() == bad {
			var m map[string]int
			m["deliberate"]++ // panics: assignment to a nil map
		}
	})
}

func TestDemoPlainFailure(t *testing.T) {
	if mpirunner.Rank() == demo(t) {
		t.Errorf("deliberate failure outside mpirunner.Run on rank %d", mpirunner.Rank())
	}
}

// Runs last: it ends the job.
func TestDemoFatalBeforeCollective(t *testing.T) {
	bad := demo(t)
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Rank() == bad {
			t.Fatalf("deliberate t.Fatal on rank %d before a barrier", c.Rank())
		}
		require.NoError(t, c.Barrier()) // the other ranks wait here for rank 2
	})
}

// Never reached by -run Demo (the test above ends the job); run it alone.
// Rank 2 never returns from the body, as a rank stuck in a system call or
// a loop would; the others wait for it in the agreement and abort the job.
func TestDemoHangOnOneRank(t *testing.T) {
	bad := demo(t)
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		require.NoError(t, c.Barrier())
		if c.Rank() == bad {
			time.Sleep(time.Hour)
		}
	})
}
