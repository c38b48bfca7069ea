package collio

import (
	"os"

	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/gocores"
)

// ShareCores sets GOMAXPROCS to this node's CPUs divided by the MPI ranks
// the launcher placed on it (at least 1), unless the environment sets
// GOMAXPROCS, and returns the value in effect. Each rank's Go runtime
// otherwise assumes it has the whole node, and oversubscribed ranks'
// threads compete for the cores (this is why OpenMP codes set
// OMP_NUM_THREADS to cores per rank). The ranks
// per node come from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS); without it nothing
// changes. Where Open MPI tells its ranks that they share their cores
// (OMPI_MCA_mpi_oversubscribe or OMPI_MCA_mpi_yield_when_idle set), it is
// 1 whatever the node's CPUs. Otherwise, where the division leaves a rank
// one processor and the node has no more ranks than CPUs, it is 2: the
// second is a spare, idle unless a second goroutine has work. Without one, the
// runtime's monitor takes the processor of every MPI call that waits more
// than 20 µs and wakes a thread to look for work. It needs no
// communication and may be called before MPI is initialised.
//
// It also moves the Go runtime's monitor thread (sysmon) to SCHED_BATCH,
// unless COLLIO_QUIET_MONITOR=0: as an ordinary thread its wakeups preempt
// the rank's thread at once, also inside a write that holds the file's
// inode lock, and the other ranks' writes of that file then sleep on the
// lock. See internal/gocores.
func ShareCores() int {
	// A value not accepted keeps the default; Open reports it.
	if quiet, _ := envvar.Switch(envvar.QuietMonitor, os.Getenv(envvar.QuietMonitor)); quiet {
		monitor.Quiet()
	}
	return gocores.Share()
}

// monitor lists the candidates for the runtime's monitor thread; it must
// be made during init (gocores.FindMonitor).
var monitor = gocores.FindMonitor()
