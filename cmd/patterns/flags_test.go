//go:build cgo

package main

import (
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/benchutil"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-pattern", "all", "-dir", dir})
	require.NoError(t, err)
	require.Equal(t, []string{"flash", "btio", "e3sm", "s3d"}, c.patterns)
	require.Equal(t, []string{"collio", "mpiio"}, c.impls)
	require.Equal(t, [3]int{64, 64, 64}, c.sizes.s3d)
	require.Equal(t, 16, c.sizes.flashBlocks)
	require.Equal(t, 0.05, c.sizes.e3smHoles)

	c, err = parseFlags([]string{"-pattern", "s3d,e3sm", "-dir", dir, "-impl", "collio", "-driver", "sim", "-s3d-size", "8,4,2",
		"-e3sm-ncol", "100", "-e3sm-holes", "0", "-hint", "collio_strategy=twophase", "-i", "2", "-q", "-keep", "-name", "collio+twophase"})
	require.NoError(t, err)
	require.Equal(t, []string{"s3d", "e3sm"}, c.patterns)
	require.Equal(t, [3]int{8, 4, 2}, c.sizes.s3d)
	require.Equal(t, "twophase", c.hints["collio_strategy"])
	require.Equal(t, 2, c.iters)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dir", dir}, "-pattern is required"},
		{[]string{"-pattern", "hdf5", "-dir", dir}, `"hdf5" is not a pattern`},
		{[]string{"-pattern", "s3d,s3d", "-dir", dir}, "given twice"},
		{[]string{"-pattern", "s3d"}, "-dir is required"},
		{[]string{"-pattern", "s3d", "-dir", filepath.Join(dir, "no")}, "no such file"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-i", "0"}, "repetitions"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-driver", "sim"}, "cannot use collio drivers"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-s3d-size", "4,4"}, "want N or X,Y,Z"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-flash-vars", "0"}, "-flash-vars 0"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-e3sm-run", "0.5"}, "at least 1"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-e3sm-holes", "1"}, "fraction"},
		{[]string{"-pattern", "s3d", "-dir", dir, "-e3sm-2d", "0", "-e3sm-3d", "0"}, "at least one variable"},
		{[]string{"-pattern", "s3d", "-dir", dir, "x"}, "unexpected argument"},
	} {
		_, err := parseFlags(tc.args)
		require.Error(t, err, "%q", tc.args)
		require.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
	_, err = parseFlags([]string{"-h"})
	var u benchutil.UsageError
	require.ErrorAs(t, err, &u)
	require.Contains(t, u.Usage, "-e3sm-holes")
}
