package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func runPlace(t *testing.T, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"place"}, args...), &o, &e)
	return code, o.String(), e.String()
}

func TestPlaceReportAndRankfile(t *testing.T) {
	rf := filepath.Join(t.TempDir(), "rankfile")
	code, out, errOut := runPlace(t, "-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "1024x1024",
		"-shuffle", "7", "-hosts", "a,b,c,d", "-rankfile", rf)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "| byslot | 4 | 4 | 6291456 | 75.0% |")
	require.Contains(t, out, "| setmatch | 4 | 4 | 786432 | 9.4% |")
	data, err := os.ReadFile(rf)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 32)
	require.Equal(t, "rank 0=a slot=0", lines[0])
	require.Equal(t, "rank 1=b slot=0", lines[1])
	perHost := map[string]int{}
	for _, l := range lines {
		host := strings.SplitN(strings.SplitN(l, "=", 2)[1], " ", 2)[0]
		perHost[host]++
	}
	require.Equal(t, map[string]int{"a": 8, "b": 8, "c": 8, "d": 8}, perHost)
}

func TestPlaceMapByForm(t *testing.T) {
	code, out, errOut := runPlace(t, "-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-block", "16x16")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "| setmatch | 4 | 4 | 0 | 0.0% |")
	require.Contains(t, out, "mpirun --map-by slot")
	require.Contains(t, out, "rank 8=node1 slot=0")
	code, out, errOut = runPlace(t, "-nodes", "8", "-cores-per-node", "4", "-pattern", "ior-strided", "-ranks", "32",
		"-block-size", "4k", "-segments", "8")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "IOR 8 segments of 4096-byte blocks")
	code, out, errOut = runPlace(t, "-nodes", "8", "-cores-per-node", "8", "-pattern", "coll_perf", "-ranks", "64", "-size", "64")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "coll_perf 64^3 int32 on a 4x4x4 grid")
}

func TestPlaceBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "64x64", "-ranks", "30"}, "-grid 4x8 has 32 ranks, but -ranks is 30"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-pattern", "tile", "-ranks", "30"}, `unknown pattern "tile"`},
		{[]string{"-nodes", "2", "-cores-per-node", "8", "-grid", "4x8", "-array", "64x64"}, "32 ranks do not fit 2 nodes x 8 cores per node"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "64"}, `-array "64": want 2 or 3 sizes`},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x0", "-array", "64x64"}, `-grid "4x0": "0" is not a positive integer`},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "64x64x2"}, "has 2 dimensions but the array 3"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "2x64"}, "2 elements cannot be split over 4 ranks"},
		{[]string{"-cores-per-node", "8", "-grid", "4x8", "-array", "64x64"}, "-nodes and -cores-per-node are required"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-pattern", "coll_perf"}, "-pattern coll_perf needs -ranks"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-grid", "4x8", "-array", "64x64", "-hosts", "a,b"}, "-hosts names 2 hosts for -nodes 4"},
		{[]string{"-nodes", "4", "-cores-per-node", "8", "-pattern", "ior-strided", "-ranks", "4", "-block-size", "x"}, `-block-size "x"`},
	} {
		code, _, errOut := runPlace(t, c.args...)
		require.Equal(t, 1, code, "%v", c.args)
		require.Contains(t, errOut, c.want, "%v", c.args)
	}
}
