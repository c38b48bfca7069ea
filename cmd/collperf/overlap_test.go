//go:build cgo

package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/internal/comm"
	"github.com/stretchr/testify/require"
)

func TestParseFlagsOverlap(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-dir", dir, "-overlap", "0,1,2", "-overlap-rounds", "3"})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 2}, c.overlap)
	require.Equal(t, 3, c.overlapRounds)
	require.Equal(t, []string{"collio"}, c.impls, "-overlap without -impl measures collio")
	for _, bad := range [][]string{
		{"-overlap", "0,x"},
		{"-overlap", "1", "-impl", "mpiio"},
		{"-overlap", "1", "-phases", "2"},
		{"-overlap", "1", "-indep"},
		{"-overlap", "1", "-overlap-rounds", "0"},
	} {
		_, err := parseFlags(append([]string{"-dir", dir}, bad...))
		require.Error(t, err, "%v", bad)
	}
}

// The overlap mode end to end on 4 in-memory ranks: every figure is there
// and every value read back is right (RunOverlap fails otherwise).
func TestOverlapFile(t *testing.T) {
	dir := t.TempDir()
	cfg := config{dir: dir, size: [3]int{16, 12, 8}, overlap: []float64{0, 1}, overlapRounds: 1}
	results := make([][]benchutil.OverlapResult, 4)
	require.NoError(t, comm.RunWorld(4, 0, func(c comm.Comm) error {
		blk, err := decompose(cfg.size, benchutil.DimsCreate(4), c.Rank())
		if err != nil {
			return err
		}
		rs, err := overlapFile(c, cfg, blk, filepath.Join(dir, "f"))
		results[c.Rank()] = rs
		return err
	}))
	require.Len(t, results[0], 4)
	for _, r := range results[0] {
		require.Greater(t, r.IO, 0.0, fmt.Sprint(r))
		require.Greater(t, r.Nonblocking, 0.0, fmt.Sprint(r))
	}
}
