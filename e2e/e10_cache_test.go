//go:build cgo

package e2e

// The E10 cache under MPI, beyond the cached variants of TestHostEquality:
// collective calls over data that other ranks' caches still hold, and copy
// failures reported on every rank.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

const cacheBlock = 64 << 10

// cachedHints are two-phase hints with two aggregators and the cache in
// dir, plus kv.
func cachedHints(dir string, kv ...string) collio.Hints {
	return cbHints(append([]string{"cb_nodes", "2", "e10_cache", "enable", "e10_cache_path", dir}, kv...)...)
}

// TestCacheUnderMPI: rank r writes block r; then only the last two ranks
// read theirs back, collectively and before any sync, so the read's file
// domains differ from the write's and a block is read by an aggregator
// whose cache does not hold it; then every rank overwrites a block shifted
// by half a block. The read sees the data, the file ends with the newest
// bytes, and the time spent making the global file current shows in the
// stats.
func TestCacheUnderMPI(t *testing.T) {
	for _, flush := range []string{"flush_immediate", "flush_onclose", "flush_none"} {
		t.Run(flush, func(t *testing.T) {
			mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
				p, r := c.Size(), c.Rank()
				dir := mpirunner.TempDir(t, c)
				path := filepath.Join(dir, "f")
				cacheDir := filepath.Join(dir, "cache")
				// Slow global writes keep the copies behind the calls.
				f, err := collio.Open(c, "faulty:"+path, collio.ModeCreate|collio.ModeRdWr,
					cachedHints(cacheDir, "e10_cache_flush_flag", flush, "e10_cache_threads", strconv.Itoa(1+p%3),
						"collio_fault", "slow=write:5ms"))
				together(t, c, err, "open")
				first := pattern(cacheBlock, r, 1)
				_, err = f.WriteAtAll(first, int64(r*cacheBlock))
				together(t, c, err, "first write")

				got := make([]byte, cacheBlock)
				if r < p-2 {
					got = got[:0]
				}
				_, err = f.ReadAtAll(got, int64(r*cacheBlock))
				together(t, c, err, "read back")
				if r >= p-2 && !bytes.Equal(got, first) {
					t.Errorf("rank %d reads its block back wrong: %s", r, firstDiff(got, first))
				}
				last, _ := f.Stats()
				drained := int64(0)
				if last.CacheDrain > 0 {
					drained = 1
				}
				if n := sumInt64(t, c, drained); flush != "flush_immediate" && n == 0 {
					t.Errorf("no rank waited for copies before the read, with %s", flush)
				}

				second := pattern(cacheBlock, r, 2)
				_, err = f.WriteAtAll(second, int64(r*cacheBlock+cacheBlock/2))
				together(t, c, err, "overlapping write")
				cs, ok := f.CacheStats()
				if !ok {
					t.Errorf("rank %d has no cache", r)
				}
				if n := sumInt64(t, c, cs.CachedBytes); n < int64(2*p*cacheBlock) {
					t.Errorf("the caches took %d bytes of the %d written", n, 2*p*cacheBlock)
				}
				together(t, c, f.Close(), "close")

				if r == 0 {
					want := make([]byte, p*cacheBlock+cacheBlock/2)
					for q := range p {
						copy(want[q*cacheBlock:], pattern(cacheBlock, q, 1))
					}
					for q := range p {
						copy(want[q*cacheBlock+cacheBlock/2:], pattern(cacheBlock, q, 2))
					}
					if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, want) {
						t.Errorf("global file after close: %v %s", err, firstDiff(b, want))
					}
					if es, _ := os.ReadDir(cacheDir); len(es) != 0 {
						t.Errorf("%d files left in the cache directory", len(es))
					}
				}
				checkpoint(t, c)
			})
		})
	}
}

// TestCacheCopyErrorUnderMPI: the global file fails under the last rank's copy
// (EIO on its first write; ENOSPC after 100 bytes). Sync returns the
// copy error on every rank with the same text; for ENOSPC the retry at
// close fails too, and that rank's cache and journal stay for collio
// recover.
func TestCacheCopyErrorUnderMPI(t *testing.T) {
	cases := []struct {
		rule       string
		class      error
		closeFails bool
	}{
		{"eio_call=write:1", collio.ErrIO, false},
		{"enospc_after=100", collio.ErrNoSpace, true},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
				p, r := c.Size(), c.Rank()
				dir := mpirunner.TempDir(t, c)
				cacheDir := filepath.Join(dir, "cache")
				f, err := collio.Open(c, "faulty:"+filepath.Join(dir, "f"), collio.ModeCreate|collio.ModeRdWr,
					cachedHints(cacheDir, "cb_nodes", strconv.Itoa(p), "collio_fault", tc.rule, "collio_fault_ranks", strconv.Itoa(p-1)))
				together(t, c, err, "open")
				_, err = f.WriteAtAll(pattern(4096, r, 3), int64(r*4096))
				together(t, c, err, "cached write")
				msg := expectError(t, c, f.Sync(), tc.class, "sync", true)
				if c.Rank() == 0 && !bytes.Contains([]byte(msg), []byte("copying bytes")) {
					t.Errorf("sync error does not name the copy: %s", msg)
				}
				cerr := f.Close()
				if tc.closeFails {
					expectError(t, c, cerr, tc.class, "close", true)
				} else {
					together(t, c, cerr, "close after the retry")
				}
				if r == 0 {
					es, _ := os.ReadDir(cacheDir)
					want := 0
					if tc.closeFails {
						want = 2 // the failing rank's cache file and journal
					}
					if len(es) != want {
						t.Errorf("%d files in the cache directory, want %d: %v", len(es), want, fmt.Sprint(es))
					}
				}
				checkpoint(t, c)
			})
		})
	}
}
