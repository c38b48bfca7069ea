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

// tagged is synthetic() for another workload: the run and its results
// carry the workload and case, results say how they were verified.
func tagged(workload, cas, label, impl, kind string, write, read []float64) collperfRun {
	r := synthetic(label, "/d/"+label, impl, kind, write, read)
	r.Workload, r.Case, r.Size = workload, cas, [3]int{}
	for i := range r.Results {
		r.Results[i].Verify = map[string]string{"write": "by read", "read": "values"}[r.Results[i].Op]
	}
	return r
}

// A patterns launch of two patterns: results and implementations tagged
// per pattern.
func twoPatterns(label, impl, kind string) collperfRun {
	a := tagged("flash", "flash case", label, impl, kind, []float64{10}, []float64{20})
	b := tagged("e3sm", "e3sm case", label, impl, kind, []float64{30}, []float64{40})
	r := a
	r.Workload, r.Case = "patterns", ""
	r.Results = nil
	for _, x := range []collperfRun{a, b} {
		for _, res := range x.Results {
			res.Workload, res.Case = x.Workload, x.Case
			r.Results = append(r.Results, res)
		}
	}
	r.Impls = []implInfo{{Impl: impl, Kind: kind, Workload: "flash", PeakRSSMax: 1, PeakRSSMin: 1},
		{Impl: impl, Kind: kind, Workload: "e3sm", PeakRSSMax: 2, PeakRSSMin: 2}}
	return r
}

func TestSplitRuns(t *testing.T) {
	parts := splitRuns([]collperfRun{
		synthetic("tmpfs", "/x", "collio", "collio", []float64{1}, []float64{2}),
		twoPatterns("tmpfs", "collio", "collio"),
	})
	require.Len(t, parts, 3)
	require.Equal(t, "collperf", parts[0].Workload)
	require.Equal(t, "flash", parts[1].Workload)
	require.Equal(t, "flash case", parts[1].Case)
	require.Len(t, parts[1].Results, 2)
	require.Equal(t, []implInfo{{Impl: "collio", Kind: "collio", Workload: "e3sm", PeakRSSMax: 2, PeakRSSMin: 2}}, parts[2].Impls)
	require.Equal(t, 40.0, parts[2].Results[1].XferMiBs)
}

func multiRuns() []collperfRun {
	return []collperfRun{
		synthetic("tmpfs", "/d/tmpfs", "collio", "collio", []float64{100}, []float64{100}),
		synthetic("tmpfs", "/d/tmpfs", "mpiio:romio321", "mpiio", []float64{50}, []float64{200}),
		tagged("ior-small", "-t 4k", "tmpfs", "collio", "collio", []float64{5}, []float64{6}),
		tagged("ior-small", "-t 4k", "tmpfs", "collio+twophase", "collio", []float64{8}, []float64{3}),
		tagged("ior-small", "-t 4k", "tmpfs", "mpiio:romio321", "mpiio", []float64{10}, []float64{12}),
		tagged("ior-small", "-t 4k", "sim", "collio+even", "collio", []float64{2}, []float64{4}),
		twoPatterns("tmpfs", "collio", "collio"),
		twoPatterns("tmpfs", "mpiio:romio321", "mpiio"),
	}
}

// Sections: workload-major, storages in order of appearance, each with
// its own host comparison; rows carry their verification and breakdown.
func TestBuildMultiWorkload(t *testing.T) {
	rep := build(multiRuns(), nil)
	var keys []string
	for _, s := range rep.Sections {
		keys = append(keys, s.Workload+"/"+s.Label)
	}
	require.Equal(t, []string{"collperf/tmpfs", "ior-small/tmpfs", "ior-small/sim", "flash/tmpfs", "e3sm/tmpfs"}, keys)
	require.Equal(t, []string{"collperf", "ior-small", "flash", "e3sm"}, func() []string {
		var out []string
		for _, w := range rep.Params.Workloads {
			out = append(out, w.Name)
		}
		return out
	}())
	require.Equal(t, [][3]int{{8, 8, 8}}, rep.Params.Size, "sizes are collperf's only")

	ior := rep.Sections[1]
	w := ior.Ops[0]
	require.Equal(t, "mpiio:romio321", w.BestHost)
	require.Equal(t, []string{"collio", "collio+twophase", "mpiio:romio321"}, implsOf(w.Rows))
	require.InDelta(t, 0.8, w.Rows[1].RatioBest, 1e-12)
	require.Equal(t, "by read", w.Rows[0].Verify)
	require.NotNil(t, w.Rows[0].Collio)
	require.NotNil(t, w.Rows[1].Collio)
	require.Nil(t, w.Rows[2].Collio)

	e3sm := rep.Sections[4]
	require.Equal(t, "e3sm case", e3sm.Case)
	require.InDelta(t, 40.0/40, e3sm.Ops[1].Rows[0].RatioBest, 1e-12)
	require.Equal(t, int64(2), e3sm.Memory[0].PeakRSSMax)
}

func TestRenderMultiWorkload(t *testing.T) {
	rep := build(multiRuns(), nil)
	rep.Notes = []string{"collio+tam skipped: not available"}
	rep.Plots = []string{"bench-bandwidth-tmpfs.png"}
	var b bytes.Buffer
	render(&b, rep)
	s := b.String()
	require.Contains(t, s, "# collio benchmark: collperf, IOR-style runs and application I/O patterns")
	require.Contains(t, s, "- **ior-small**: -t 4k (2 KiB)")
	require.Contains(t, s, "Note: collio+tam skipped: not available.")
	require.Contains(t, s, "## Summary: write, best ÷ best host variant")
	require.Contains(t, s, "| workload | storage | best host (MiB/s) | collio | collio+twophase | collio+even | mpiio:romio321 |")
	require.Contains(t, s, "| ior-small | tmpfs | romio321 (10.0) | 0.50 | 0.80 |  | 1.00 |")
	require.Contains(t, s, "| ior-small | sim | – |  |  | 2.0 MiB/s |  |") // no host variant: MiB/s
	require.Contains(t, s, "![bench-bandwidth-tmpfs](bench-bandwidth-tmpfs.png)")
	require.Contains(t, s, "## ior-small — tmpfs: /d/tmpfs (tmpfs)\n\n-t 4k, 2 KiB per write.")
	require.Contains(t, s, "| collio+twophase | twophase (accesses interleave) | 2 | 1 |") // the breakdown table
	require.Contains(t, s, "| collio | 1 | 6.0 | 6.0 | 0.50 | 0.50 | 3.0 | ok |")
	require.Contains(t, s, "## collperf — tmpfs: /d/tmpfs (tmpfs)")
}

func TestVerified(t *testing.T) {
	require.Equal(t, "ok", verified("read", 0, ""))
	require.Equal(t, "(by read)", verified("write", 0, ""))
	require.Equal(t, "not checked", verified("read", 0, "none"))
	require.Equal(t, "ok (read back)", verified("write", 0, "read back"))
	require.Equal(t, "**3 bad values**", verified("write", 3, "read back"))
}

// The plots are PNG files, one pair per storage (no breakdown where no
// collio variant ran), linked from the markdown.
func TestRunWritesPlots(t *testing.T) {
	dir := t.TempDir()
	runs := multiRuns()
	runs = append(runs, synthetic("hostonly", "/d/h", "mpiio:romio321", "mpiio", []float64{1}, []float64{1}))
	for i, r := range runs {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, strings.Repeat("a", i+1)+".json"), b, 0o644))
	}
	out := filepath.Join(dir, "out")
	var stdout bytes.Buffer
	require.NoError(t, run([]string{"-in", dir, "-md", filepath.Join(out, "bench.md"), "-json", "", "-q", "-note", "n1"}, &stdout))
	for _, name := range []string{"bench-bandwidth-tmpfs.png", "bench-breakdown-tmpfs.png", "bench-bandwidth-sim.png",
		"bench-breakdown-sim.png", "bench-bandwidth-hostonly.png"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err, name)
		require.True(t, bytes.HasPrefix(b, []byte("\x89PNG")), name)
	}
	_, err := os.Stat(filepath.Join(out, "bench-breakdown-hostonly.png"))
	require.True(t, os.IsNotExist(err))
	md, err := os.ReadFile(filepath.Join(out, "bench.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "![bench-breakdown-sim](bench-breakdown-sim.png)")
	require.Contains(t, string(md), "Note: n1.")

	// -noplots
	out2 := filepath.Join(dir, "out2")
	require.NoError(t, run([]string{"-in", dir, "-md", filepath.Join(out2, "bench.md"), "-json", "", "-q", "-noplots"}, &stdout))
	matches, _ := filepath.Glob(filepath.Join(out2, "*.png"))
	require.Empty(t, matches)
}
