//go:build cgo

package mpirunner

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/collio/collio/internal/mpi"
)

// abortGrace lets testing print the failed test's report (into the log)
// before the log is replayed and the job aborted.
const abortGrace = 500 * time.Millisecond

var abortOnce sync.Once

// abortJob is the way out when ranks can no longer agree (some are stuck
// in a collective): it replays this rank's log and calls MPI_Abort, which
// makes mpirun kill every rank and exit with code. It runs in its own
// goroutine, because this rank's test goroutine may block in MPI again;
// that takes MPI_THREAD_MULTIPLE. Only the first call does anything.
func abortJob(why string, code int, wait time.Duration) {
	abortOnce.Do(func() {
		go func() {
			time.Sleep(wait)
			if rankOut != nil {
				rankOut.replay()
			}
			msg := fmt.Sprintf("mpirunner: rank %d: %s; aborting the job", Rank(), why)
			if rankOut != nil {
				fmt.Fprintf(rankOut.term, "[rank %d] %s\n", rankOut.rank, msg)
			} else {
				fmt.Fprintln(os.Stderr, msg)
			}
			mpi.Abort(mpi.World(), code)
			os.Exit(code) // if MPI did not end the process
		}()
	})
}
