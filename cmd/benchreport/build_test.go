package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// synthetic builds one collperf JSON document: impl/kind with the given
// write and read bandwidths, one result per repetition.
func synthetic(label, dir, impl, kind string, write, read []float64) collperfRun {
	r := collperfRun{Label: label, Dir: dir, FS: "tmpfs", NP: 4, Size: [3]int{8, 8, 8}, Bytes: 2048, Iters: len(write), Host: "h1"}
	info := implInfo{Impl: impl, Kind: kind, PeakRSSMax: 30 << 20, PeakRSSMin: 20 << 20, RSSReset: true}
	for i := range write {
		for _, op := range []struct {
			name string
			bw   float64
		}{{"write", write[i]}, {"read", read[i]}} {
			res := result{Impl: impl, Kind: kind, Op: op.name, Iter: i + 1, Bytes: 2048, XferMiBs: op.bw, TotalMiB: op.bw / 2,
				Alloc: allocStats{Max: 100, AggregatorMax: -1, OtherMax: -1}}
			if kind == "collio" {
				res.Alloc = allocStats{Max: int64(1000 * (i + 1)), AggregatorMax: int64(1000 * (i + 1)), OtherMax: 10}
				res.Collio = &breakdown{Strategy: "twophase", Reason: "accesses interleave", Rounds: 2, Aggregators: 1,
					Plan: float64(i + 1), IO: 0.5, Total: float64(10 * (i + 1)), MsgsSent: 6, BytesSent: 3 << 20}
			}
			r.Results = append(r.Results, res)
		}
	}
	if kind == "collio" {
		info.PeakRSSMax = 40 << 20
	}
	r.Impls = []implInfo{info}
	return r
}

func TestBuildRatiosAndMedians(t *testing.T) {
	runs := []collperfRun{
		synthetic("tmpfs", "/dev/shm/x", "mpiio:ompio/vulcan", "mpiio", []float64{100, 300, 200}, []float64{50, 60, 70}),
		synthetic("tmpfs", "/dev/shm/x", "collio", "collio", []float64{400, 100, 150, 120}, []float64{90, 80, 70, 60}),
		synthetic("tmpfs", "/dev/shm/x", "mpiio:romio321", "mpiio", []float64{250, 250, 250}, []float64{100, 10, 20}),
		synthetic("disk", "/var/tmp/y", "collio", "collio", []float64{10}, []float64{20}),
		synthetic("disk", "/var/tmp/y", "mpiio:romio321", "mpiio", []float64{40}, []float64{10}),
	}
	rep := build(runs, nil)
	require.Len(t, rep.Sections, 2)
	s := rep.Sections[0]
	require.Equal(t, "tmpfs", s.Label)
	require.Equal(t, "/dev/shm/x", s.Dir)
	require.Len(t, s.Ops, 2)

	w := s.Ops[0]
	require.Equal(t, "write", w.Op)
	// collio is listed first, then hosts in order of appearance.
	require.Equal(t, []string{"collio", "mpiio:ompio/vulcan", "mpiio:romio321"}, implsOf(w.Rows))
	// Best host by best: vulcan (300) over romio (250); highest host
	// median: romio (250) over vulcan (200).
	require.Equal(t, "mpiio:ompio/vulcan", w.BestHost)
	c := w.Rows[0]
	require.Equal(t, 4, c.N)
	require.Equal(t, 400.0, c.Best)
	require.Equal(t, 135.0, c.Median) // (120+150)/2
	require.Equal(t, 67.5, c.MedianTotal)
	require.InDelta(t, 400.0/300, c.RatioBest, 1e-12)
	require.InDelta(t, 135.0/250, c.RatioMedian, 1e-12)
	require.Equal(t, 1.0, w.Rows[1].RatioBest)
	require.InDelta(t, 200.0/250, w.Rows[1].RatioMedian, 1e-12)
	require.InDelta(t, 250.0/300, w.Rows[2].RatioBest, 1e-12)
	require.Equal(t, 1.0, w.Rows[2].RatioMedian)

	r := s.Ops[1]
	require.Equal(t, "read", r.Op)
	require.Equal(t, "mpiio:romio321", r.BestHost) // 100 > 70
	require.Equal(t, 90.0, r.Rows[0].Best)
	require.Equal(t, 75.0, r.Rows[0].Median)
	require.InDelta(t, 0.9, r.Rows[0].RatioBest, 1e-12)
	require.InDelta(t, 75.0/60, r.Rows[0].RatioMedian, 1e-12) // host medians: vulcan 60, romio 20

	// collio breakdown: medians over the 4 repetitions.
	require.NotNil(t, w.Collio)
	require.Equal(t, "twophase", w.Collio.Strategy)
	require.Equal(t, 4, w.Collio.N)
	require.Equal(t, 2.5, w.Collio.Plan)
	require.Equal(t, 25.0, w.Collio.Total)

	// Memory: collio's aggregator allocation is the max over repetitions;
	// the host's split is unknown.
	require.Equal(t, []memRow{
		{Impl: "collio", PeakRSSMax: 40 << 20, PeakRSSMin: 20 << 20, WriteAggMax: 4000, WriteOtherMax: 10, ReadAggMax: 4000, ReadOtherMax: 10},
		{Impl: "mpiio:ompio/vulcan", PeakRSSMax: 30 << 20, PeakRSSMin: 20 << 20, WriteAggMax: -1, WriteOtherMax: -1, ReadAggMax: -1, ReadOtherMax: -1},
		{Impl: "mpiio:romio321", PeakRSSMax: 30 << 20, PeakRSSMin: 20 << 20, WriteAggMax: -1, WriteOtherMax: -1, ReadAggMax: -1, ReadOtherMax: -1},
	}, s.Memory)

	// The second directory is compared only with its own host variants.
	d := rep.Sections[1]
	require.Equal(t, "disk", d.Label)
	require.Equal(t, 0.25, d.Ops[0].Rows[0].RatioBest)
	require.Equal(t, 2.0, d.Ops[1].Rows[0].RatioBest)

	require.Equal(t, []int{4}, rep.Params.NP)
	require.Equal(t, []int{3, 4, 1}, rep.Params.Iters)
}

func TestBuildWithoutHostVariant(t *testing.T) {
	rep := build([]collperfRun{synthetic("", "/tmp/z", "collio", "collio", []float64{1, 2}, []float64{3, 4})}, nil)
	row := rep.Sections[0].Ops[0].Rows[0]
	require.Equal(t, 0.0, row.RatioBest)
	require.Equal(t, "", rep.Sections[0].Ops[0].BestHost)
	var b bytes.Buffer
	render(&b, rep)
	require.Contains(t, b.String(), "| collio | 2 | 2.0 | 1.5 | – | – |")
	require.Contains(t, b.String(), "## /tmp/z (tmpfs)")
}

func TestBadValuesAndFailures(t *testing.T) {
	r := synthetic("tmpfs", "/d", "collio", "collio", []float64{1}, []float64{1})
	r.Results[1].Bad = 7
	r.Errors = []string{"collio: read back 7 wrong values"}
	rep := build([]collperfRun{r}, []launch{{Seq: 2, Label: "tmpfs", Variant: "romio321", RC: 134, Command: "mpirun x"}})
	require.Equal(t, int64(7), rep.Sections[0].Ops[1].Rows[0].Bad)
	require.Len(t, rep.Failures, 2)
	require.Contains(t, rep.Failures[1], "launch 2 (tmpfs, romio321) exited with code 134")
	var b bytes.Buffer
	render(&b, rep)
	require.Contains(t, b.String(), "**7 bad values**")
	require.Contains(t, b.String(), "## Failures")
}

func TestParseLaunches(t *testing.T) {
	in := "# seq\tlabel\n1\ttmpfs\tcollio\t/dev/shm/a\t0\t3.25\traw/01.json\tmpirun -np 4 bin/collperf -dir /dev/shm/a\n\n"
	ls, err := parseLaunches(strings.NewReader(in), "l")
	require.NoError(t, err)
	require.Equal(t, []launch{{Seq: 1, Label: "tmpfs", Variant: "collio", Dir: "/dev/shm/a", RC: 0, Seconds: 3.25, JSON: "raw/01.json",
		Command: "mpirun -np 4 bin/collperf -dir /dev/shm/a"}}, ls)
	_, err = parseLaunches(strings.NewReader("1\tx\n"), "l")
	require.ErrorContains(t, err, "l:1: want 8")
	_, err = parseLaunches(strings.NewReader("x\ta\tb\tc\t0\t1\tj\tcmd\n"), "l")
	require.ErrorContains(t, err, "bad seq")
}

// End to end on files: JSON in a directory (one empty file from a launch
// that died), markdown and JSON out.
func TestRunOnFiles(t *testing.T) {
	dir := t.TempDir()
	for i, r := range []collperfRun{
		synthetic("tmpfs", "/dev/shm/x", "collio", "collio", []float64{300}, []float64{200}),
		synthetic("tmpfs", "/dev/shm/x", "mpiio:ompio/vulcan", "mpiio", []float64{100}, []float64{400}),
	} {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, []string{"01-a.json", "02-b.json"}[i]), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "03-c.json"), nil, 0o644))
	md, js := filepath.Join(dir, "out", "bench.md"), filepath.Join(dir, "out", "bench.json")
	var out bytes.Buffer
	require.NoError(t, run([]string{"-in", dir, "-md", md, "-json", js, "-cmd", "QUICK=1 scripts/bench.sh"}, &out))
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	require.Equal(t, out.String(), string(b))
	s := string(b)
	require.Contains(t, s, "| collio | 1 | 300 | 300 | 3.00 | 3.00 | 150 | (by read) |")
	require.Contains(t, s, "| mpiio:ompio/vulcan (best host) | 1 | 400 | 400 | 1.00 | 1.00 | 200 | ok |")
	require.Contains(t, s, "| collio | 1 | 200 | 200 | 0.50 | 0.50 | 100 | ok |")
	require.Contains(t, s, "03-c.json: empty")
	require.Contains(t, s, "QUICK=1 scripts/bench.sh")
	require.Contains(t, s, "collio write: twophase (accesses interleave), rounds=2, aggs=1")
	var rep benchReport
	jb, err := os.ReadFile(js)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(jb, &rep))
	require.Len(t, rep.Runs, 2)
	require.Equal(t, 3.0, rep.Sections[0].Ops[0].Rows[0].RatioBest)

	require.ErrorContains(t, run([]string{}, &out), "-in is required")
	require.ErrorContains(t, run([]string{"-in", t.TempDir()}, &out), "no collperf JSON")
}

func implsOf(rows []row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Impl)
	}
	return out
}
