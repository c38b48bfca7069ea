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
	cpus := runtime.NumCPU()
	n := max(1, cpus/local)
	if sharesCores() {
		n = 1
	} else if n < 2 && local <= spareUpTo*cpus {
		n = 2
	}
	runtime.GOMAXPROCS(n)
	return n
}

// spareUpTo is the most ranks per CPU for which a rank gets a spare
// processor beside its goroutine's: ranks with a CPU each. The goroutine
// spends much of its time in C, inside MPI calls that wait for other
// ranks; with no idle processor the runtime's monitor takes the processor
// of a thread that stays in C past one of its ticks (20 µs) and wakes
// another thread to look for work, at every such call. The spare is idle
// unless a second goroutine has work. (internal/mpi keeps the monitor's
// other rule, for goroutines it counts as long running, from firing.)
// With 8 ranks per CPU the threads the spare wakes whenever a goroutine
// has work cost more than the wakeups it saves, except in calls of a few
// pieces; with 2 it depended on the call. Ranks told that they share
// their cores get no spare either (sharesCores).
const spareUpTo = 1

// sharesCores reports whether the launcher says this node's ranks have
// less than a core each: Open MPI's mpirun sets mpi_oversubscribe when it
// placed more ranks than slots, and mpi_yield_when_idle asks every rank to
// give its core up while it waits (both as OMPI_MCA_ variables). Then no
// rank has a core to spare, however many CPUs the node shows: a second
// processor, even a spare, adds the runtime's threads to the ones
// competing for those cores, the file system client's among them, and
// collective calls that exchange data ran slower with it. (Nodes emulated
// on one machine are the case: each sees all the machine's CPUs and is
// told to yield.)
func sharesCores() bool {
	for _, key := range []string{"OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_mpi_yield_when_idle"} {
		switch strings.ToLower(os.Getenv(key)) {
		case "1", "true", "yes", "enabled":
			return true
		}
	}
	return false
}
