// Package gocores fits each MPI rank's Go runtime to its share of the
// node's CPUs: GOMAXPROCS (Share), and the runtime's monitor thread kept
// from preempting the rank's thread (Monitor).
package gocores

import (
	"os"
	"runtime"
	"strconv"
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
	runtime.GOMAXPROCS(n)
	return n
}
