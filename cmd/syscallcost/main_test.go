//go:build cgo

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every mode moves the runs to collperf's places: rank 1 writes the
// second half of each 1 MiB row of pair 0.
func TestModes(t *testing.T) {
	for _, mode := range []string{"go", "raw", "c", "c32", "goread", "cread"} {
		path := filepath.Join(t.TempDir(), "f")
		require.NoError(t, run(mode, path, 1, 40, 1, time.Now()), mode)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Len(t, got, 40<<20, mode)
		for x := 0; x < 40; x++ {
			row := got[x<<20 : (x+1)<<20]
			require.True(t, bytes.Equal(make([]byte, runSize), row[:runSize]), "%s: row %d's first half is rank 0's", mode, x)
			want := make([]byte, runSize)
			for k := range want {
				want[k] = byte((x*runSize + k) * 7)
			}
			require.True(t, bytes.Equal(want, row[runSize:]), "%s: row %d's second half", mode, x)
		}
	}
	require.ErrorContains(t, run("fast", filepath.Join(t.TempDir(), "f"), 0, 1, 1, time.Now()), "unknown mode")
}
