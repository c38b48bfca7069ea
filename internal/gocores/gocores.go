// Package gocores fits each MPI rank's Go runtime to its share of the
// node's CPUs: GOMAXPROCS (Share), and the runtime's monitor thread kept
// from preempting the rank's thread (Monitor).
package gocores

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Share: see collio.ShareCores.
func Share() int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	local := 0
	for _, key := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"} {
		if n, err := strconv.Atoi(os.Getenv(key)); err == nil && n > 0 {
			local = n
			break
		}
	}
	if local == 0 {
		return runtime.GOMAXPROCS(0)
	}
	n := max(1, runtime.NumCPU()/local)
	if sharesCores() {
		n = 1
	}
	runtime.GOMAXPROCS(n)
	return n
}

// sharesCores reports whether the launcher says this node's ranks have
// less than a core each: Open MPI's mpirun sets mpi_oversubscribe when it
// placed more ranks than slots, and mpi_yield_when_idle asks every rank to
// give its core up while it waits (both as OMPI_MCA_ variables). Then no
// rank has a core to spare, however many CPUs the node shows, and a second
// processor only adds the runtime's threads looking for work to the ones
// competing. (Nodes emulated on one machine are the case: each sees all
// the machine's CPUs and is told to yield.)
func sharesCores() bool {
	for _, key := range []string{"OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_mpi_yield_when_idle"} {
		switch strings.ToLower(os.Getenv(key)) {
		case "1", "true", "yes", "enabled":
			return true
		}
	}
	return false
}
