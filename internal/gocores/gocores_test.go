package gocores

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShareCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "")
	t.Setenv("MPI_LOCALNRANKS", "")
	t.Setenv("OMPI_MCA_mpi_oversubscribe", "")
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "")
	runtime.GOMAXPROCS(3)
	require.Equal(t, 3, Share(), "no launcher: unchanged")

	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1")
	require.Equal(t, max(2, runtime.NumCPU()), Share())
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "")
	t.Setenv("MPI_LOCALNRANKS", "100000")
	require.Equal(t, 1, Share(), "many more ranks than CPUs: one each")
	require.Equal(t, 1, runtime.GOMAXPROCS(0))
	t.Setenv("MPI_LOCALNRANKS", strconv.Itoa(2*runtime.NumCPU()))
	require.Equal(t, 1, Share(), "two ranks per CPU: one each")
	t.Setenv("MPI_LOCALNRANKS", strconv.Itoa(runtime.NumCPU()))
	require.Equal(t, 2, Share(), "a CPU per rank: one processor each and a spare")

	// A rank told that its node's cores are shared gets one processor
	// however many CPUs the node shows, and no spare, even alone there.
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1")
	t.Setenv("MPI_LOCALNRANKS", "")
	for _, k := range []string{"OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_mpi_yield_when_idle"} {
		t.Setenv(k, "1")
		require.Equal(t, 1, Share(), k)
		require.Equal(t, 1, runtime.GOMAXPROCS(0), k)
		t.Setenv(k, "0")
		require.Equal(t, max(2, runtime.NumCPU()), Share(), k+"=0")
		t.Setenv(k, "")
	}

	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	require.Equal(t, 2, Share(), "the environment wins")
}
