//go:build cgo

package mpirunner

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

// Outcome record that each rank contributes to a test's agreement: one
// status byte, a 2-byte message length and the first failure message.
const (
	recordSize = 256
	maxMessage = recordSize - 3
)

// ownFailures counts the Run bodies that failed on this rank (as opposed
// to failing because another rank did); Main uses it to decide whether
// this rank's log is worth replaying.
var ownFailures atomic.Int64

// agreedFailures counts the Run tests that failed here only because
// another rank failed.
var agreedFailures atomic.Int64

// Run runs fn on every rank with a private duplicate of WORLD and makes
// all ranks agree on the result: a failure (t.Error, t.Fatal or a panic)
// on any rank fails the test on every rank, with the failing ranks named.
// If the ranks cannot agree within MPITEST_AGREE_TIMEOUT (default 60s),
// typically because this rank left fn while others wait in a collective,
// the test fails and the job is aborted shortly after instead of hanging.
//
// Every rank must call Run for the same tests in the same order; fn must
// not call t.Parallel.
func Run(t *testing.T, fn func(t *testing.T, c comm.Comm)) {
	t.Helper()
	if !mpi.Initialized() || mpi.Finalized() {
		t.Fatal("mpirunner.Run: MPI is not running; use mpirunner.Main in TestMain")
	}
	c, err := mpi.World().DupComm()
	if err != nil {
		t.Fatalf("mpirunner.Run: duplicating WORLD: %v", err)
	}
	var stuck bool
	// Registered first, so it runs after the cleanups fn registers (for
	// example TempDir's, which still uses c).
	t.Cleanup(func() {
		if !stuck {
			if err := c.Free(); err != nil {
				t.Errorf("mpirunner.Run: freeing the test communicator: %v", err)
			}
		}
	})
	var start int64
	if rankOut != nil {
		start = rankOut.offset()
	}
	defer func() {
		t.Helper()
		if v := recover(); v != nil {
			t.Errorf("panic in the test body: %v\n%s", v, debug.Stack())
		}
		stuck = !agreeOnTest(t, start)
	}()
	fn(t, c)
}

// agreeOnTest shares this rank's outcome with all ranks of WORLD and fails
// t if any rank failed. It reports false when agreement timed out, after
// arranging for the job to be aborted.
func agreeOnTest(t *testing.T, start int64) bool {
	t.Helper()
	failed := t.Failed()
	msg := ""
	if failed {
		ownFailures.Add(1)
		if rankOut != nil {
			msg = rankOut.firstMessageSince(start)
		}
	}
	rec := record(failed, msg)
	timeout := agreeTimeout()
	all, err := gatherWithin(mpi.World(), rec, timeout)
	if err != nil {
		t.Errorf("mpirunner: ranks did not agree on the outcome within %v (%v): some rank is probably stuck "+
			"in a collective this rank did not enter; the job will be aborted", timeout, err)
		abortJob("test "+t.Name()+" could not agree with the other ranks", 1, abortGrace)
		return false
	}
	ranks, first := failures(all)
	others := slices.DeleteFunc(slices.Clone(ranks), func(r int) bool { return r == Rank() })
	if len(others) > 0 {
		if !failed {
			agreedFailures.Add(1)
		}
		if first != "" {
			first = " (" + first + ")"
		}
		t.Errorf("test failed on ranks %v%s", ranks, first)
	}
	return true
}

// record encodes one rank's outcome for the agreement.
func record(failed bool, msg string) []byte {
	rec := make([]byte, recordSize)
	if failed {
		rec[0] = 1
		n := copy(rec[3:], msg[:min(len(msg), maxMessage)])
		binary.LittleEndian.PutUint16(rec[1:3], uint16(n))
	}
	return rec
}

// failures decodes the gathered records: the ranks that failed and the
// first failure message found, as "rank N: message".
func failures(all []byte) (ranks []int, first string) {
	for r := 0; (r+1)*recordSize <= len(all); r++ {
		rec := all[r*recordSize : (r+1)*recordSize]
		if rec[0] == 0 {
			continue
		}
		ranks = append(ranks, r)
		n := int(binary.LittleEndian.Uint16(rec[1:3]))
		if first == "" && n > 0 && n <= maxMessage {
			first = fmt.Sprintf("rank %d: %s", r, rec[3:3+n])
		}
	}
	return ranks, first
}
