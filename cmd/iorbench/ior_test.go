//go:build cgo

package main

import (
	"bytes"

	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsDefaults(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), c.block)
	require.Equal(t, int64(256<<10), c.xfer)
	require.Equal(t, 1, c.segments)
	require.True(t, c.write)
	require.True(t, c.read, "neither -w nor -r: both, as IOR")
	require.False(t, c.collective)
	require.Equal(t, "testFile", c.path)
	require.Equal(t, []string{"collio", "mpiio"}, c.impls)
	require.Equal(t, "ior", c.workload)
}

func TestParseFlagsIOR(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-b", "16k", "-t", "4k", "-s", "8", "-F", "-c", "-w", "-R", "-e", "-C", "-Q", "2", "-i", "3",
		"-o", filepath.Join(dir, "f"), "-hint", "cb_nodes=2", "-hints", "a=1,b=2", "-impl", "collio", "-driver", "sim",
		"-name", "collio+x", "-q", "-k", "-workload", "ior-small", "-label", "tmpfs"})
	require.NoError(t, err)
	require.Equal(t, int64(16<<10), c.block)
	require.Equal(t, int64(4<<10), c.xfer)
	require.Equal(t, 8, c.segments)
	require.True(t, c.filePerProc && c.collective && c.write && c.checkRead && c.read && c.fsync && c.reorder && c.quiet && c.keep)
	require.False(t, c.checkWrite)
	require.Equal(t, 2, c.reorderOffset)
	require.Equal(t, map[string]string{"cb_nodes": "2", "a": "1", "b": "2"}, map[string]string(c.hints))
	require.Equal(t, "sim", c.driver)
	require.Equal(t, "-t 4k -b 16k -s 8, file per process, collective, reordered reads (-C -Q 2), fsync", c.caseText())

	c, err = parseFlags([]string{"-d", "2", "-o", filepath.Join(dir, "f"), "-compute-busy"})
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, c.delay, "-d counts seconds, as in IOR")
	require.True(t, c.busy)
	c, err = parseFlags([]string{"-d", "250ms", "-o", filepath.Join(dir, "f")})
	require.NoError(t, err)
	require.Equal(t, 250*time.Millisecond, c.delay)

	c, err = parseFlags([]string{"-W", "-o", filepath.Join(dir, "f")})
	require.NoError(t, err)
	require.True(t, c.write && c.checkWrite)
	require.False(t, c.read, "-W alone writes and checks, it does not read")
}

func TestParseFlagsErrors(t *testing.T) {
	dir := t.TempDir()
	o := filepath.Join(dir, "f")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", o, "-t", "12"}, "multiple of 8"},
		{[]string{"-o", o, "-t", "4k", "-b", "6k"}, "multiple of the transfer size"},
		{[]string{"-o", o, "-b", "x"}, "-b:"},
		{[]string{"-o", o, "-s", "0"}, "at least one segment"},
		{[]string{"-o", o, "-i", "0"}, "at least one repetition"},
		{[]string{"-o", o, "-Q", "0"}, "task offset"},
		{[]string{"-o", o, "-V", "-F"}, "not with -F"},
		{[]string{"-o", filepath.Join(dir, "no", "f")}, "no such file"},
		{[]string{"-o", o, "-impl", "posix"}, "not an implementation"},
		{[]string{"-o", o, "-driver", "sim"}, "host MPI-IO cannot use collio drivers"},
		{[]string{"-o", o, "-hint", "x"}, "not key=value"},
		{[]string{"-o", o, "-workload", "a b"}, "one word"},
		{[]string{"-o", o, "extra"}, "unexpected argument"},
		{[]string{"-o", o, "-d", "soon"}, "-d \"soon\""},
		{[]string{"-o", o, "-d", "-2s"}, "duration >= 0"},
	} {
		_, err := parseFlags(tc.args)
		require.Error(t, err, "%q", tc.args)
		require.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
	_, err := parseFlags([]string{"-h"})
	var u benchutil.UsageError
	require.ErrorAs(t, err, &u)
	require.Contains(t, u.Usage, "-b")
}

// IOR's shared-file layout: (s*np + r)*b + k*t; with -F, s*b + k*t; with
// a view, offsets within the rank's blocks.
func TestLayout(t *testing.T) {
	c := config{block: 16, xfer: 8, segments: 2}
	l := newLayout(c, 3)
	require.Equal(t, int64(4), l.calls())
	var got []int64
	for i := range l.calls() {
		got = append(got, l.fileOffset(1, i))
	}
	require.Equal(t, []int64{16, 24, 64, 72}, got) // segment 0: rank 1's block at 16; segment 1 at (3+1)*16
	require.Equal(t, int64(64), l.callOffset(1, 2))
	require.Equal(t, 0, l.fileIndex(2))

	c.useView = true
	l = newLayout(c, 3)
	require.Equal(t, int64(16), l.callOffset(1, 2))
	require.Equal(t, int64(64), l.fileOffset(1, 2))

	c.useView, c.filePerProc = false, true
	l = newLayout(c, 3)
	require.Equal(t, int64(16), l.fileOffset(1, 2))
	require.Equal(t, 2, l.fileIndex(2))

	// Every byte of the shared file is some rank's, once.
	c = config{block: 24, xfer: 8, segments: 3}
	l = newLayout(c, 4)
	seen := map[int64]int{}
	for r := range 4 {
		for i := range l.calls() {
			seen[l.fileOffset(r, i)]++
		}
	}
	require.Len(t, seen, 4*3*3)
	for off, n := range seen {
		require.Equal(t, 1, n, "offset %d", off)
		require.Zero(t, off%8)
		require.Less(t, off, int64(4*3*24))
	}
}

func TestPattern(t *testing.T) {
	buf := make([]byte, 64)
	k := patternKey(3, 1)
	fill(buf, 128, k)
	require.Zero(t, verify(buf, 128, k))
	require.Equal(t, int64(8), verify(buf, 136, k), "shifted by one word: every word differs")
	require.Equal(t, int64(8), verify(buf, 128, patternKey(3, 2)), "another repetition")
	require.Equal(t, int64(8), verify(buf, 128, patternKey(4, 1)), "another file")
	buf[9] ^= 1
	require.Equal(t, int64(1), verify(buf, 128, k))
}

func TestSummaryOutput(t *testing.T) {
	s := summarize([]float64{1, 2, 3, 4})
	require.Equal(t, stats{max: 4, min: 1, mean: 2.5, sd: 1.118033988749895}, s)
	c := config{block: 1 << 20, xfer: 1 << 18, segments: 1, impls: []string{"collio"}, path: "/x/f", iters: 2}
	rs := []benchutil.Result{
		{Impl: "collio", Op: "write", TotalMiB: 100, Total: 0.04, Calls: 4, Seconds: map[string]float64{"xfer": 0.03}},
		{Impl: "collio", Op: "write", TotalMiB: 200, Total: 0.02, Calls: 4, Seconds: map[string]float64{"xfer": 0.01}},
	}
	var b bytes.Buffer
	printHeader(&b, c, 4, "tmpfs")
	printLine(&b, rs[0], c, 1)
	printSummary(&b, rs, c, 4)
	out := b.String()
	require.Contains(t, out, "aggregate filesize  : 4 MiB")
	require.Contains(t, out, "access     bw(MiB/s)")
	require.Contains(t, out, "write      100.00     400.00     0.007500")
	require.Contains(t, out, "Max Write: collio")
	require.Contains(t, out, "Summary of all tests:")
	lines := strings.Split(out, "\n")
	var sum string
	for _, l := range lines {
		if strings.HasPrefix(l, "write ") && strings.Contains(l, "collio") && strings.Contains(l, "1048576") {
			sum = l
		}
	}
	require.NotEmpty(t, sum, out)
	require.Contains(t, sum, "200.00     100.00     150.00      50.00")
}

func TestParseFlagsOverlap(t *testing.T) {
	c, err := parseFlags([]string{"-c", "-V", "-overlap", "0,2", "-overlap-rounds", "2"})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 2}, c.overlap)
	require.Equal(t, 2, c.overlapRounds)
	require.Equal(t, []string{"collio"}, c.impls, "-overlap without -impl measures collio")
	for _, bad := range [][]string{
		{"-overlap", "1"},             // no -c
		{"-c", "-F", "-overlap", "1"}, // file per process
		{"-c", "-overlap", "1", "-impl", "collio,mpiio"},
		{"-c", "-overlap", "-1"},
	} {
		_, err := parseFlags(bad)
		require.Error(t, err, "%v", bad)
	}
}

// The overlap mode end to end on 3 in-memory ranks, with and without a
// view: every transfer of a pass started at once, every value read back
// checked (RunOverlap fails on a wrong one).
func TestOverlapFile(t *testing.T) {
	for _, view := range []bool{false, true} {
		cfg := config{block: 4 << 10, xfer: 1 << 10, segments: 3, collective: true, useView: view,
			overlap: []float64{0, 1}, overlapRounds: 1, path: filepath.Join(t.TempDir(), "ior")}
		results := make([][]benchutil.OverlapResult, 3)
		require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
			b := &bench{cfg: cfg, world: c, rank: c.Rank(), np: c.Size()}
			b.lay = newLayout(cfg, b.np)
			rs, err := b.overlapFile(cfg.path)
			results[c.Rank()] = rs
			return err
		}), "view %v", view)
		require.Len(t, results[0], 4, "view %v", view)
	}
}
