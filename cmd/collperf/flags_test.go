//go:build cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/collio/collio/internal/benchutil"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-dir", dir})
	require.NoError(t, err)
	require.Equal(t, [3]int{256, 256, 256}, c.size)
	require.Equal(t, []string{"collio", "mpiio"}, c.impls)
	require.Equal(t, 1, c.iters)
	require.Empty(t, c.hints)
	require.False(t, c.quiet)
}

func TestParseFlagsAll(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-dir", dir, "-size", "8,4,2", "-impl", "mpiio", "-i", "3", "-q",
		"-json", filepath.Join(dir, "o.json"), "-label", "tmpfs", "-keep", "-interleave", "-indep", "-warmup"})
	require.NoError(t, err)
	require.True(t, c.warmup)
	require.True(t, c.interleave)
	require.True(t, c.indep)
	require.Equal(t, [3]int{8, 4, 2}, c.size)
	require.Equal(t, []string{"mpiio"}, c.impls)
	require.Equal(t, 3, c.iters)
	require.True(t, c.quiet)
	require.True(t, c.keep)
	require.Equal(t, "tmpfs", c.label)
}

// -hints, -hint and -hintfile apply in command-line order: later wins.
func TestParseFlagsHintOrder(t *testing.T) {
	dir := t.TempDir()
	hf := filepath.Join(dir, "hints")
	require.NoError(t, os.WriteFile(hf, []byte("# ROMIO hint file\ncb_nodes 3\ncb_buffer_size 1m   # trailing comment\n\nromio_cb_write\tenable\n"), 0o644))

	c, err := parseFlags([]string{"-dir", dir,
		"-hints", "cb_nodes=1,cb_config_list=*:1,node7:2,striping_unit=1m",
		"-hintfile", hf,
		"-hint", "cb_buffer_size=4m",
	})
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"cb_nodes":       "3",           // the file came after -hints
		"cb_config_list": "*:1,node7:2", // a piece without '=' continues the value
		"striping_unit":  "1m",          // only in -hints
		"cb_buffer_size": "4m",          // -hint came after the file
		"romio_cb_write": "enable",      // only in the file
	}, map[string]string(c.hints))
	require.Equal(t, "-hint", c.hintSrc["cb_buffer_size"])
	require.Equal(t, "-hintfile "+hf, c.hintSrc["cb_nodes"])

	// The other order: the file last.
	c, err = parseFlags([]string{"-dir", dir, "-hint", "cb_nodes=9", "-hintfile", hf})
	require.NoError(t, err)
	require.Equal(t, "3", c.hints["cb_nodes"])

	// A -hint value may contain '=' and ','.
	c, err = parseFlags([]string{"-dir", dir, "-hint", "cb_config_list=a:1,b:2", "-hint", "x=y=z"})
	require.NoError(t, err)
	require.Equal(t, "a:1,b:2", c.hints["cb_config_list"])
	require.Equal(t, "y=z", c.hints["x"])
}

func TestParseFlagsErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	bad := filepath.Join(dir, "bad.hints")
	require.NoError(t, os.WriteFile(bad, []byte("cb_nodes=2\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-dir is required"},
		{[]string{"-dir", filepath.Join(dir, "nope")}, "no such file"},
		{[]string{"-dir", file}, "not a directory"},
		{[]string{"-dir", dir, "-size", "0"}, "not a positive integer"},
		{[]string{"-dir", dir, "-size", "4,4"}, "want N or X,Y,Z"},
		{[]string{"-dir", dir, "-size", "x"}, "not a positive integer"},
		{[]string{"-dir", dir, "-size", "2048"}, "2^31-1"},
		{[]string{"-dir", dir, "-impl", "romio"}, `"romio" is not an implementation`},
		{[]string{"-dir", dir, "-impl", "collio,collio"}, "given twice"},
		{[]string{"-dir", dir, "-i", "0"}, "at least one repetition"},
		{[]string{"-dir", dir, "-hint", "cb_nodes"}, "not key=value"},
		{[]string{"-dir", dir, "-hint", "cb_nodes="}, "empty value"},
		{[]string{"-dir", dir, "-hint", "cb nodes=2"}, "contains a space"},
		{[]string{"-dir", dir, "-hints", "cb_nodes=2,,"}, "empty item"},
		{[]string{"-dir", dir, "-hints", "enable,cb_nodes=2"}, "not key=value"},
		{[]string{"-dir", dir, "-hintfile", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"-dir", dir, "-hintfile", bad}, `bad.hints:1: "cb_nodes=2": the format is "key value"`},
		{[]string{"-dir", dir, "extra"}, `unexpected argument "extra"`},
		{[]string{"-dir", dir, "-bogus"}, "flag provided but not defined"},
		{[]string{"-dir", dir, "-label", "a\nb"}, "one line"},
	} {
		_, err := parseFlags(tc.args)
		require.Error(t, err, "%q", tc.args)
		require.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

func TestParseFlagsHelp(t *testing.T) {
	_, err := parseFlags([]string{"-h"})
	var u benchutil.UsageError
	require.ErrorAs(t, err, &u)
	require.Contains(t, u.Usage, "-hintfile")
	require.Contains(t, u.Usage, "usage: mpirun")
}

func TestFillVerifyBytes(t *testing.T) {
	g := [3]int{5, 4, 3}
	b, err := decompose(g, [3]int{2, 1, 1}, 1)
	require.NoError(t, err)
	buf := make([]byte, 4*b.elements())
	b.fillBytes(g, buf)
	bad, first := b.verifyBytes(g, buf)
	require.Zero(t, bad)
	require.Equal(t, -1, first)
	buf[4*5+1] ^= 1
	buf[4*7] ^= 1
	bad, first = b.verifyBytes(g, buf)
	require.Equal(t, 2, bad)
	require.Equal(t, 5, first)
}

func TestParseFlagsPhases(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-dir", dir, "-phases", "3", "-compute", "0, 250ms,2s", "-sync=false", "-compute-busy"})
	require.NoError(t, err)
	require.Equal(t, 3, c.phases)
	require.Equal(t, []time.Duration{0, 250 * time.Millisecond, 2 * time.Second}, c.computes)
	require.True(t, c.noSync)
	require.True(t, c.busy)

	for _, bad := range [][]string{
		{"-compute", "1s"},                   // no -phases
		{"-phases", "2", "-compute", "soon"}, // not a duration
		{"-phases", "2", "-compute", "-1s"},
		{"-phases", "-1"},
	} {
		_, err := parseFlags(append([]string{"-dir", dir}, bad...))
		require.Error(t, err, "%v", bad)
		require.Contains(t, err.Error(), "-"+strings.TrimPrefix(bad[len(bad)-2], "-"), "%v: %v", bad, err)
	}
}

// The E10 model: a sync longer than the compute after it shows by the
// difference, a shorter one not at all, and the last phase's in full.
func TestPhaseModel(t *testing.T) {
	r := phaseRun{Bytes: 1 << 20, Phases: []phaseTimes{
		{Write: 0.5, Sync: 2, Compute: 1, Wait: 1},  // 0.5 + 1 not hidden
		{Write: 0.5, Sync: 2, Compute: 3, Wait: 0},  // hidden
		{Write: 0.5, Sync: 2, Compute: 0, Wait: 2}}, // last: 0.5 + 2
	}
	r.finish()
	require.InDelta(t, 3.0/4.5, r.Model, 1e-9)
	require.InDelta(t, 3.0/4.5, r.Perceived, 1e-9)
	require.InDelta(t, 3.0/1.5, r.Hidden, 1e-9)
}
