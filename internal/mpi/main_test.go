//go:build cgo

package mpi_test

import (
	"testing"

	"github.com/collio/collio/internal/mpirunner"
)

// TestMain runs the package's tests under mpirunner: it initialises MPI, keeps
// only rank 0's output and makes every rank agree on the result. It lives in
// the external test package because mpirunner imports mpi.
func TestMain(m *testing.M) { mpirunner.Main(m) }
