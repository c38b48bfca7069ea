//go:build cgo

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { mpirunner.Main(m) }

// The quickstart's file holds every rank's line at its offset.
func TestWrite(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		path := filepath.Join(mpirunner.TempDir(t, c), "out.dat")
		require.NoError(t, write(c, path))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		var want []byte
		for r := range c.Size() {
			want = fmt.Appendf(want, "rank %10d\n", r)
		}
		require.Equal(t, string(want), string(got))
	})
}
