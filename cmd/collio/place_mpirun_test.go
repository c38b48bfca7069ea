package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPlaceRankfileUnderMpirun gives this machine's mpirun a SetMatch
// rankfile for 4 made-up hosts (scripts/vhosts-rsh.sh starts a daemon per
// host here) and checks from inside the job (testdata/placecheck.c) that
// every rank runs on its rankfile host and slot and shares memory with
// exactly the ranks the rankfile puts there. The checker is then given a
// rankfile that differs from the one mpirun used, and must fail.
func TestPlaceRankfileUnderMpirun(t *testing.T) {
	mpicc, err := exec.LookPath("mpicc")
	if err != nil {
		t.Skip("no mpicc")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun")
	}
	dir := t.TempDir()
	rf := filepath.Join(dir, "rankfile")
	code, out, errOut := runPlace(t, "-nodes", "4", "-cores-per-node", "2", "-grid", "4x2", "-array", "64x64",
		"-shuffle", "3", "-hosts", "vA,vB,vC,vD", "-rankfile", rf)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "| setmatch | 4 | 4 | 8192 | 25.0% |")
	hostfile := filepath.Join(dir, "hostfile")
	require.NoError(t, os.WriteFile(hostfile, []byte("vA slots=2\nvB slots=2\nvC slots=2\nvD slots=2\n"), 0o644))
	bin := filepath.Join(dir, "placecheck")
	cc, err := exec.Command(mpicc, "-O", "-o", bin, "testdata/placecheck.c").CombinedOutput()
	require.NoError(t, err, string(cc))
	rsh, err := filepath.Abs("../../scripts/vhosts-rsh.sh")
	require.NoError(t, err)

	check := func(expected string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mpirun, "--allow-run-as-root", "--mca", "plm_rsh_agent", rsh,
			"--hostfile", hostfile, "-rf", rf, "-np", "8", bin, expected)
		cmd.Env = append(os.Environ(), "TMPDIR="+dir)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	got, err := check(rf)
	require.NoError(t, err, got)
	require.Contains(t, got, "placecheck: 8 ranks on 4 hosts, each on its rankfile host and slot")

	// Rank 0 and the first rank on another host swapped in what the
	// checker expects.
	data, err := os.ReadFile(rf)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	place := func(l string) string { return strings.SplitN(l, "=", 2)[1] } // "host slot=k"
	host := func(l string) string { return strings.Fields(place(l))[0] }
	j := 1
	for j < len(lines) && host(lines[j]) == host(lines[0]) {
		j++
	}
	require.Less(t, j, len(lines))
	p0, pj := place(lines[0]), place(lines[j])
	lines[0], lines[j] = "rank 0="+pj, fmt.Sprintf("rank %d=%s", j, p0)
	wrong := filepath.Join(dir, "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	got, err = check(wrong)
	require.Error(t, err, got)
	require.Contains(t, got, fmt.Sprintf("placecheck: rank 0 runs on host %s, the rankfile says %s", strings.Fields(p0)[0], strings.Fields(pj)[0]))
}
