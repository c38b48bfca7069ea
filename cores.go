package collio

import "github.com/collio/collio/internal/gocores"

// ShareCores sets GOMAXPROCS to this node's CPUs divided by the MPI ranks
// the launcher placed on it (at least 1), unless the environment sets
// GOMAXPROCS, and returns the value in effect. Each rank's Go runtime
// otherwise assumes it has the whole node: with 4 ranks on 2 cores,
// collperf's two-phase calls ran at 0.92 of OMPIO's individual with Go's
// default and 0.96 with one processor per rank (alternating launches),
// much as OpenMP codes set OMP_NUM_THREADS to cores per rank. The ranks
// per node come from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS); without it nothing
// changes. It needs no communication and may be called before MPI is
// initialised.
func ShareCores() int { return gocores.Share() }
