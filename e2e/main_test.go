//go:build cgo

package e2e

import (
	"testing"

	"github.com/collio/collio/internal/mpirunner"
)

// TestMain runs the package's tests under mpirunner: MPI is initialised once,
// only rank 0's output reaches the terminal and every rank agrees on the
// result. Without mpirun the tests run as a 1-rank singleton.
func TestMain(m *testing.M) { mpirunner.Main(m) }
