package adio

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"

	_ "github.com/collio/collio/driver/ufs"
)

// world runs fn on n in-memory ranks and fails the test on any rank's error.
func world(t *testing.T, n int, fn func(c comm.Comm) error) {
	t.Helper()
	require.NoError(t, comm.RunWorldTimeout(n, 0, 60*time.Second, fn))
}

// sameOnAll runs fn on n ranks and returns each rank's error, requiring
// that all ranks report the same error text.
func sameOnAll(t *testing.T, n int, fn func(c comm.Comm) error) []error {
	t.Helper()
	errs := make([]error, n)
	world(t, n, func(c comm.Comm) error {
		errs[c.Rank()] = fn(c)
		return nil
	})
	for r := 1; r < n; r++ {
		require.Equal(t, fmt.Sprint(errs[0]), fmt.Sprint(errs[r]), "rank %d's error differs from rank 0's", r)
	}
	return errs
}

// rankData is deterministic, rank-dependent content of n bytes.
func rankData(rank int, n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rank*37 + i*7 + i/251)
	}
	return b
}

// expected returns the file that writing data through view v at offset
// off (etypes) produces on top of base: computed by walking the
// filetype's blocks tile by tile, independently of the transfer code.
func expected(base []byte, v View, off int64, data []byte) []byte {
	out := append([]byte(nil), base...)
	skip := off * v.Etype.Size()
	i := int64(0)
	for tile := int64(0); i < int64(len(data)); tile++ {
		for bo, bl := range v.Filetype.Blocks() {
			for k := int64(0); k < bl && i < int64(len(data)); k++ {
				if skip > 0 {
					skip--
					continue
				}
				at := v.Disp + tile*v.Filetype.Extent() + bo + k
				for int64(len(out)) <= at {
					out = append(out, 0)
				}
				out[at] = data[i]
				i++
			}
		}
	}
	return out
}

func tempPath(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

func readFile(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var _ = layout.Byte
