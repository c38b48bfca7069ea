//go:build !cgo

package collio_test

import (
	"testing"

	"github.com/collio/collio"
	"github.com/stretchr/testify/require"
)

// Without cgo the MPI entry points fail with a clear error instead of
// being missing.
func TestNoMPIWithoutCgo(t *testing.T) {
	_, err := collio.World()
	require.ErrorIs(t, err, collio.ErrUnsupported)
	require.ErrorContains(t, err, "without cgo")
	_, err = collio.CommFromFint(0)
	require.ErrorIs(t, err, collio.ErrUnsupported)
	_, err = collio.TypeFromMPI(0)
	require.ErrorIs(t, err, collio.ErrUnsupported)
	require.ErrorIs(t, collio.Init(), collio.ErrUnsupported)
	require.NoError(t, collio.Finalize())
}
