// The job it launches (testdata/crosswrite) is built the way this test
// is, and collio has no MPI without cgo.

//go:build cgo

package main

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/collio/collio/cmd/collio/internal/place"
	"github.com/stretchr/testify/require"
)

// TestCrossingBytesUnderMpirun runs the real two-phase collective write
// (testdata/crosswrite) under this machine's mpirun on two virtual hosts
// (scripts/vhosts-rsh.sh), once with mpirun's default placement (byslot)
// and once with the rankfile collio place writes (and once on this host
// alone with collio_node_size=2), and checks that the
// data bytes collio counted as crossing nodes (metrics.Call.CrossNodeBytes,
// summed over the ranks) are exactly what the placement model predicts
// for each mapping: 16 KiB for byslot, none for SetMatch.
func TestCrossingBytesUnderMpirun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "crosswrite")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "build", "-o", bin, "./testdata/crosswrite").CombinedOutput()
	require.NoError(t, err, string(out))

	// A 64x64 array of doubles in rows over 4 ranks, shuffled (seed 4),
	// on 2 nodes of 2 cores.
	const seed = 4
	rf := filepath.Join(dir, "rankfile")
	code, report, errOut := runPlace(t, "-nodes", "2", "-cores-per-node", "2", "-grid", "4x1", "-array", "64x64",
		"-shuffle", strconv.Itoa(seed), "-hosts", "vA,vB", "-rankfile", rf)
	require.Equal(t, 0, code, errOut)
	g := place.Grid{Sizes: []int{64, 64}, Procs: []int{4, 1}, Elem: 8, Order: rand.New(rand.NewPCG(seed, 0)).Perm(4)}
	acc, err := g.Accesses()
	require.NoError(t, err)
	arch := place.Arch{Nodes: 2, CoresPerNode: 2}
	prob, err := place.NewProblem(acc, arch, 0, place.Domains{})
	require.NoError(t, err)
	sm, err := prob.SetMatch(place.DefaultMinFraction)
	require.NoError(t, err)
	wantSlot, _, err := prob.Crossing(place.BySlot(4, arch))
	require.NoError(t, err)
	wantSM, _, err := prob.Crossing(sm)
	require.NoError(t, err)
	require.Equal(t, int64(16384), wantSlot)
	require.Zero(t, wantSM)
	require.Contains(t, report, "| setmatch | 2 | 2 | 0 | 0.0% |")

	hostfile := filepath.Join(dir, "hostfile")
	require.NoError(t, os.WriteFile(hostfile, []byte("vA slots=2\nvB slots=2\n"), 0o644))
	rsh, err := filepath.Abs("../../scripts/vhosts-rsh.sh")
	require.NoError(t, err)
	line := regexp.MustCompile(`crosswrite: rank (\d+) host \S+ vhost (\S*) aggregators \S+ \S+ cross (\d+)`)
	launch := func(mpirunArgs []string, appArgs ...string) (cross int64, hostOf map[int]string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append([]string{"--allow-run-as-root"}, mpirunArgs...)
		args = append(args, "-np", "4", bin, filepath.Join(dir, "out"), "64", "64", "4", "1", strconv.Itoa(seed))
		args = append(args, appArgs...)
		cmd := exec.CommandContext(ctx, mpirun, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+dir)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		hostOf = map[int]string{}
		for _, m := range line.FindAllStringSubmatch(string(b), -1) {
			r, _ := strconv.Atoi(m[1])
			n, _ := strconv.ParseInt(m[3], 10, 64)
			hostOf[r] = m[2]
			cross += n
		}
		require.Len(t, hostOf, 4, string(b))
		return cross, hostOf
	}
	vhosts := []string{"--mca", "plm_rsh_agent", rsh, "--hostfile", hostfile}
	cross, hosts := launch(vhosts)
	require.Equal(t, map[int]string{0: "vA", 1: "vA", 2: "vB", 3: "vB"}, hosts, "mpirun's default placement is byslot")
	require.Equal(t, wantSlot, cross, "default placement")
	// collio_node_size=2 on one host: virtual nodes of consecutive ranks,
	// byslot's layout again.
	cross, _ = launch([]string{"--oversubscribe"}, "2")
	require.Equal(t, wantSlot, cross, "collio_node_size=2")
	cross, hosts = launch(append(vhosts, "-rf", rf))
	for r, k := range sm.Nodes().Of {
		require.Equal(t, []string{"vA", "vB"}[k], hosts[r], "rank %d", r)
	}
	require.Equal(t, wantSM, cross, "SetMatch rankfile")
}
