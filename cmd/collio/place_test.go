package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collio/collio/cmd/collio/internal/place"
	"github.com/collio/collio/record"
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

// writeRecord records one collective write of the accesses of g for the
// file name, as COLLIO_RECORD would.
func writeRecord(t *testing.T, dir, name string, g place.Grid) {
	t.Helper()
	acc, err := g.Accesses()
	require.NoError(t, err)
	for r, a := range acc {
		w, err := record.Create(dir, "/data/"+name, r)
		require.NoError(t, err)
		require.NoError(t, w.Write(record.Call{Seq: 1, Op: "write_at_all", Rank: r, Ranks: len(acc),
			LB: a.Filetype.LB(), Extent: a.Filetype.Extent(), Runs: record.Runs(a.Filetype), Bytes: a.Size}))
		require.NoError(t, w.Close())
	}
}

func TestPlaceFromRecord(t *testing.T) {
	dir := t.TempDir()
	g := place.Grid{Sizes: []int{1024, 1024}, Procs: []int{4, 8}, Elem: 8}
	g.Order = rand.New(rand.NewPCG(7, 0)).Perm(32)
	writeRecord(t, dir, "tile.dat", g)
	code, out, errOut := runPlace(t, "-nodes", "4", "-cores-per-node", "8", "-record", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "recorded tile.dat call 1 (write_at_all): 32 ranks on 4 nodes x 8 cores")
	// The same numbers as the grid itself, shuffled the same way.
	require.Contains(t, out, "| setmatch | 4 | 4 | 786432 | 9.4% |")

	writeRecord(t, dir, "other.dat", place.Grid{Sizes: []int{8, 8}, Procs: []int{2, 2}, Elem: 1})
	code, _, errOut = runPlace(t, "-nodes", "4", "-cores-per-node", "8", "-record", dir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "holds records of 2 files (other.dat, tile.dat): choose one with -file")
	code, out, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "2", "-record", dir, "-file", "other.dat")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "recorded other.dat call 1")
	code, _, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "2", "-record", dir, "-file", "other.dat", "-call", "4")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no call 4 (1 calls recorded)")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.dat.rank1.rec"), []byte("garbage\n"), 0o644))
	code, _, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "2", "-record", dir, "-file", "other.dat")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "other.dat.rank1.rec line 1: not a collio record")
	code, _, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "2", "-record", t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no records (*.rank*.rec)")
}

func TestPlaceBenchPatterns(t *testing.T) {
	code, out, errOut := runPlace(t, "-nodes", "4", "-cores-per-node", "16", "-pattern", "btio", "-ranks", "64")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "BTIO-like")
	// 128^3 points of 40 bytes; three quarters of every domain comes from other nodes.
	require.Contains(t, out, "| byslot | 4 | 4 | 62914560 | 75.0% |")
	// Segmentation: byslot's aggregators are ranks 0, 16, 32, 48, each
	// leading its node's 16 ranks. bynode's are ranks 0-3, so the groups
	// are {0}, {1}, {2} and {3..63}, led by rank 3 on node 3: 45 ranks'
	// data (the 61 less the 16 on node 3) crosses.
	require.Contains(t, out, "the bytes crossing nodes are: byslot 0 (0.0%), bynode 58982400 (70.3%)")
	code, _, errOut = runPlace(t, "-nodes", "4", "-cores-per-node", "16", "-pattern", "s3d")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "-pattern s3d needs -ranks")
	code, _, errOut = runPlace(t, "-nodes", "4", "-cores-per-node", "16", "-pattern", "btio", "-ranks", "60")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "btio needs a square number of ranks, not 60")
}

// The affinity line: the grid of place's TestAffinityCrossingMatchesTheRun,
// where the model equals the bytes a two-phase run sends across nodes.
func TestPlaceAffinityDomains(t *testing.T) {
	code, out, errOut := runPlace(t, "-nodes", "2", "-cores-per-node", "4", "-grid", "8x1", "-array", "40x6144", "-shuffle", "5")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "| setmatch | 2 | 2 | 491520 | 25.0% |")
	require.Contains(t, out, "With collio's affinity domains (its default, cb_buffer_size 16777216; where they do not apply, ROMIO's):\nbyslot 65536 (3.3%), bynode 65536 (3.3%), setmatch 65536 (3.3%).")
	// Blocks of 64 KiB do not fit a 32 KiB collective buffer.
	code, out, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "4", "-grid", "8x1", "-array", "40x6144", "-shuffle", "5", "-cb_buffer_size", "32k")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "collio's affinity domains do not apply here")
	code, _, errOut = runPlace(t, "-nodes", "2", "-cores-per-node", "4", "-grid", "8x1", "-array", "40x6144", "-cb_buffer_size", "0")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `-cb_buffer_size "0": need at least 1 byte`)
}
