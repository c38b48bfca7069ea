//go:build cgo

// Package mpirunner runs Go tests under mpirun: only rank 0's output reaches
// the terminal, every rank agrees on pass/fail, and a rank that leaves a
// collective early makes the job end instead of hang.
//
// Use it from TestMain and run the package through the launcher script:
//
//	func TestMain(m *testing.M) { mpirunner.Main(m) }
//
//	MPI_NP=4 go test -p 1 -exec "$PWD/scripts/mpiexec.sh" ./internal/mpi/
//
// Without mpirun the tests run as a 1-rank MPI singleton.
package mpirunner

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/collio/collio/internal/mpi"
)

// MPI state is tied to the thread that initialised it: keep the main
// goroutine (which runs TestMain, hence mpi.Init) on the main thread.
func init() { runtime.LockOSThread() }

// Main is the body of a package's TestMain. It initialises MPI, sends the
// output of ranks other than 0 to a per-rank log, runs the tests, agrees
// on the exit code with every rank, replays the logs of ranks that failed
// on their own, finalises MPI (if it initialised it) and exits every rank
// with the highest exit code.
func Main(m *testing.M) {
	provided, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpirunner:", err)
		os.Exit(2)
	}
	world := mpi.World()
	rank, size := world.Rank(), world.Size()
	if size > 1 && provided < mpi.ThreadMultiple {
		fmt.Fprintf(os.Stderr, "mpirunner: rank %d: MPI provides only %v; aborting a stuck job may fail\n", rank, provided)
	}
	if rank != 0 {
		if rankOut, err = redirectOutput(rank); err != nil {
			fmt.Fprintln(os.Stderr, err)
			rankOut = nil
		} else {
			// Verbose mode streams each t.Errorf into the log as it
			// happens, so Run can send a failure's first message to rank 0.
			if !flag.Parsed() {
				flag.Parse()
			}
			flag.Set("test.v", "true")
		}
	}
	code := m.Run()
	os.Exit(finish(rank, code))
}

// Each rank's contribution to the final agreement: exit code, and the
// digest of the log it would replay (0: nothing to replay).
const finishRecord = 12

// finish agrees on the job's exit code, lets the ranks that failed on
// their own replay their logs (once per distinct log), and returns the
// highest exit code.
func finish(rank, code int) int {
	world := mpi.World()
	timeout := agreeTimeout()
	// A rank failed "on its own" if one of its Run bodies failed, or if it
	// failed while no Run test failed here because of another rank (then a
	// plain test must have failed here). Only such ranks replay their log.
	own := code != 0 && (ownFailures.Load() > 0 || agreedFailures.Load() == 0)
	var lines []string
	rec := make([]byte, finishRecord)
	binary.LittleEndian.PutUint32(rec, uint32(code))
	if own && rankOut != nil {
		lines = rankOut.failureText()
		binary.LittleEndian.PutUint64(rec[4:], digest(lines))
	}
	all, err := gatherWithin(world, rec, timeout)
	if err != nil {
		abortJob(fmt.Sprintf("the ranks did not agree on the exit code within %v", timeout), max(code, 1), 0)
		select {} // abortJob ends the process
	}
	worst, failed := 0, []int(nil)
	sameAsMe := []int(nil)
	firstWithMyLog := -1
	mine := binary.LittleEndian.Uint64(rec[4:])
	for r := 0; (r+1)*finishRecord <= len(all); r++ {
		c := int(int32(binary.LittleEndian.Uint32(all[r*finishRecord:])))
		worst = max(worst, c)
		if c != 0 {
			failed = append(failed, r)
		}
		if d := binary.LittleEndian.Uint64(all[r*finishRecord+4:]); mine != 0 && d == mine {
			if firstWithMyLog < 0 {
				firstWithMyLog = r
			}
			sameAsMe = append(sameAsMe, r)
		}
	}
	if rankOut != nil && mine != 0 && firstWithMyLog == rank {
		note := ""
		if len(sameAsMe) > 1 {
			note = fmt.Sprintf("(ranks %v printed the same; shown once)", sameAsMe)
		}
		rankOut.replayLines(lines, note)
	}
	if len(failed) > 0 && world.Size() > 1 {
		// Let the replays reach mpirun before rank 0's summary line.
		gatherWithin(world, []byte{0}, timeout)
		time.Sleep(50 * time.Millisecond)
		if rank == 0 {
			fmt.Printf("mpirunner: tests failed on ranks %v\n", failed)
			if code == 0 {
				fmt.Println("FAIL")
			}
		}
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpirunner:", err)
		worst = max(worst, 1)
	}
	return worst
}
