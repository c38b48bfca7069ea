package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestE10Report(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	base := write("base.json", `{"label":"no-cache","phase_runs":[{"compute_s":1,"phases":[{"write_s":1},{"write_s":1}],
		"perceived_mib_s":100,"model_mib_s":100,"hidden_mib_s":100}]}`)
	cached := write("cache.json", `{"label":"cache","phase_runs":[{"compute_s":1,"phases":[{"write_s":0.1,"sync_s":0.9},{"write_s":0.1,"sync_s":0.9,"wait_s":0.9}],
		"perceived_mib_s":250,"model_mib_s":200,"hidden_mib_s":1000}]}`)
	var out bytes.Buffer
	require.NoError(t, run([]string{"-e10", base, cached}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[0], "÷ no-cache")
	require.Equal(t, "| cache | 1.00 | 0.100 | 0.900 | 0.450 | 250.0 | 200.0 | 1.25 | 1000.0 | 2.50 |", lines[3])

	require.ErrorContains(t, run([]string{"-e10", write("x.json", `{"results":[]}`)}, &out), "not a collperf -phases report")
	require.ErrorContains(t, run([]string{"-e10"}, &out), "JSON files")
}
