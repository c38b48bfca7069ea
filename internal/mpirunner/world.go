//go:build cgo

package mpirunner

import (
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

// World is MPI_COMM_WORLD as a comm.Comm. Tests should prefer the private
// communicator Run passes them.
func World() comm.Comm { return mpi.World() }

// Rank is this process's rank in WORLD.
func Rank() int { return mpi.World().Rank() }

// Size is the number of ranks in WORLD (1 without mpirun).
func Size() int { return mpi.World().Size() }
