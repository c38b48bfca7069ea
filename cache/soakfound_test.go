package cache_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// Regression tests for defects the soak test (internal/soak) found.

// Independent writes that sieve under e10_cache=enable: each rank's
// read-modify-write window holds the other ranks' bytes of the same call,
// read before they were written, and its copy to the global file, in no
// particular order with theirs, put the stale bytes back over them. Only
// e10_cache=coherent (whose locks hold until the copy lands) may sieve.
func TestSievedWritesUnderCacheKeepOtherRanksBytes(t *testing.T) {
	for _, mode := range []string{"enable", "coherent"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			h := map[string]string{"collio_strategy": "independent", "romio_ds_write": "enable", "ind_wr_buffer_size": "4096",
				"e10_cache": mode, "e10_cache_path": t.TempDir(), "e10_cache_flush_flag": "flush_onclose", "e10_cache_threads": "2"}
			// 20 bytes of every 256 per rank: every rank's windows cover
			// the other ranks' records.
			ft := must(layout.Resized(layout.Bytes(20), 0, 256))
			const n = 2000
			world(t, func(c comm.Comm) error {
				f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				if err := f.SetView(adio.View{Disp: int64(64 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
					return err
				}
				if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), 0, n)), 0); err != nil {
					return err
				}
				return f.Close()
			})
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			for r := range ranks {
				d := rankData(r, 0, n)
				for i := 0; i < n; i += 20 {
					at := 64*r + 256*(i/20)
					if at+20 > len(got) || !bytes.Equal(got[at:at+20], d[i:i+20]) {
						t.Fatalf("rank %d's record %d (bytes %d..%d) was lost", r, i/20, at, at+20)
					}
				}
			}
		})
	}
}

// A copy that failed on a rank other than rank 0 (which truncates), found
// by a collective read (which drains the ranges it reads and leaves a
// failed extent for the next Sync or Close to retry), then set_size below
// it: the failed extent must not be retried at close, which grew the file
// back past its new size with the old bytes.
func TestSetSizeDropsFailedCopiesOnEveryRank(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	cacheDir := t.TempDir()
	h := map[string]string{"collio_strategy": "independent", "collio_error_agreement": "immediate",
		"e10_cache": "enable", "e10_cache_path": cacheDir, "e10_cache_flush_flag": "flush_onclose",
		"collio_fault": "eio_call=write:1", "collio_fault_ranks": "2"}
	const block, size = 1000, 1500
	errs := make([]error, ranks)
	world(t, func(c comm.Comm) error {
		r := c.Rank()
		f, err := adio.Open(c, "faulty:"+path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		if err := f.SetView(adio.View{Disp: int64(block * r), Etype: layout.Byte, Filetype: layout.Byte}, nil); err != nil {
			return err
		}
		if _, err := f.WriteAtAll(adio.Bytes(rankData(r, 0, block)), 0); err != nil {
			return err
		}
		if _, err := f.ReadAtAll(adio.Bytes(make([]byte, block)), 0); err == nil {
			return fmt.Errorf("rank %d: the read did not report the failed copy", r)
		}
		if err := f.SetSize(size); err != nil {
			return err
		}
		errs[r] = f.Close() // may report the copy error again
		return nil
	})
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, size, len(got), "the file grew back past set_size (close errors: %v)", errs)
	want := append(rankData(0, 0, block), rankData(1, 0, block)[:size-block]...)
	require.Equal(t, want, got)
}
