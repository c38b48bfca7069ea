package ioserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	_ "github.com/collio/collio/driver/faulty"
	_ "github.com/collio/collio/driver/ufs"
	// The strategies, registered as collio has them.
	_ "github.com/collio/collio/independent"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	_ "github.com/collio/collio/segment"
	_ "github.com/collio/collio/tam"
	"github.com/collio/collio/topo"
	_ "github.com/collio/collio/twophase"
	"github.com/stretchr/testify/require"
)

// world runs fn on the compute ranks of an in-memory world of n ranks
// (virtual nodes of nodeSize) with servers I/O server ranks.
func world(t *testing.T, n, nodeSize, servers int, cfg Config, fn func(c comm.Comm, s *Session) error) {
	t.Helper()
	err := comm.RunWorldTimeout(n, nodeSize, 60*time.Second, func(w comm.Comm) error {
		c, err := Split(w, servers, cfg)
		if err != nil || c == nil {
			return err
		}
		s, _ := SessionOf(c)
		ferr := fn(c, s)
		if ferr = agree.Errors(c, ferr); ferr != nil {
			Stop(c)
			return ferr
		}
		return Stop(c)
	})
	require.NoError(t, err)
}

func open(s *Session, path string, flags int, params map[string]string) (driver.File, error) {
	drv, p, err := driver.Resolve(path)
	if err != nil {
		return nil, err
	}
	return NewDriver(s, drv).Open(p, driver.OpenOptions{Flags: flags, Perm: 0o644, Params: params})
}

// openAll opens on every compute rank, rank 0 creating the file first.
func openAll(c comm.Comm, s *Session, path string, params map[string]string) (driver.File, error) {
	var f driver.File
	var err error
	if c.Rank() == 0 {
		f, err = open(s, path, driver.ORdWr|driver.OCreate, params)
	}
	if err := agree.Errors(c, err); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		f, err = open(s, path, driver.ORdWr, params)
	}
	return f, agree.Errors(c, err)
}

func pattern(n int, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7 + 1)
	}
	return b
}

func TestPickServersSpreadsOverNodes(t *testing.T) {
	require.Equal(t, []int{7, 3, 6}, PickServers(topo.Virtual(8, 4), 3))
	require.Equal(t, []int{5, 3, 1}, PickServers(topo.Virtual(6, 2), 3))
	// A rank alone on the last node is the first server.
	require.Equal(t, []int{2}, PickServers(topo.Nodes{Of: []int{0, 0, 1}, Names: []string{"a", "b"}}, 1))
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		v    string
		size int
		want int
	}{{"8", 1024, 8}, {"1%", 1024, 11}, {"0.5%", 100, 1}, {"0", 4, 0}} {
		n, err := ParseCount("collio_io_servers", c.v, c.size)
		require.NoError(t, err, c.v)
		require.Equal(t, c.want, n, c.v)
	}
	for _, v := range []string{"4", "-1", "x", "100%", "0%", "1.5"} {
		_, err := ParseCount("collio_io_servers", v, 4)
		require.ErrorContains(t, err, "collio_io_servers=\""+v+"\"")
	}
}

func TestPiecesFollowBlocks(t *testing.T) {
	require.Equal(t, []Piece{{0, 5, 0, 5}, {1, 10, 5, 10}, {0, 20, 15, 3}}, Pieces(5, 18, 10, 2))
	require.Equal(t, []Piece{{0, 5, 0, 18}}, Pieces(5, 18, 10, 1))
}

// TestManyRanksOverlappingRewrites: 1016 compute ranks and 8 servers.
// Each rank writes its block, rewrites part of it, and reads it back at
// once (from the queue or the file); after a barrier every rank
// overwrites a neighbour's first bytes (the later write wins), and the
// file after close is what the writes in that order make.
func TestManyRanksOverlappingRewrites(t *testing.T) {
	const ranks, servers, block = 1024, 8, 600
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	compute := ranks - servers
	want := make([]byte, compute*block)
	for r := range compute {
		copy(want[r*block:], pattern(block, r))
		copy(want[r*block+100:], pattern(50, r+5000))
	}
	for r := range compute {
		n := (r + 1) % compute
		copy(want[n*block:], pattern(20, r+9000))
	}
	world(t, ranks, 16, servers, Config{Buffer: 64 << 10}, func(c comm.Comm, s *Session) error {
		f, err := openAll(c, s, "ufs:"+path, nil)
		if err != nil {
			return err
		}
		r := c.Rank()
		if _, err := f.WriteAt(pattern(block, r), int64(r*block)); err != nil {
			return err
		}
		if _, err := f.WriteAt(pattern(50, r+5000), int64(r*block+100)); err != nil {
			return err
		}
		got := make([]byte, block)
		if _, err := f.ReadAt(got, int64(r*block)); err != nil {
			return err
		}
		own := pattern(block, r)
		copy(own[100:], pattern(50, r+5000))
		if !bytes.Equal(got, own) {
			return fmt.Errorf("rank %d reads back other bytes than it wrote", r)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		n := (r + 1) % c.Size()
		if _, err := f.WriteAt(pattern(20, r+9000), int64(n*block)); err != nil {
			return err
		}
		return f.Close()
	})
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "file differs from the writes in order")
}

// TestBufferSmallerThanOneWrite: servers of 4 KiB take each rank's
// larger write in pieces, nothing lost: 1 MiB per rank with 2 servers, and
// 8 KiB per rank at 1016 compute ranks with 8 servers.
func TestBufferSmallerThanOneWrite(t *testing.T) {
	bufferSmaller(t, 6, 2, 1<<20)
	bufferSmaller(t, 1024, 8, 8<<10)
}

func bufferSmaller(t *testing.T, ranks, servers, size int) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	compute := ranks - servers
	world(t, ranks, 4, servers, Config{Buffer: MinBuffer}, func(c comm.Comm, s *Session) error {
		f, err := openAll(c, s, "ufs:"+path, nil)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(pattern(size, c.Rank()), int64(c.Rank()*size)); err != nil {
			return err
		}
		return f.Close()
	})
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, got, compute*size)
	for r := range compute {
		require.True(t, bytes.Equal(pattern(size, r), got[r*size:(r+1)*size]), "rank %d", r)
	}
}

// TestWriteErrorReachesEveryRank: a server's write fails (faulty
// driver); every compute rank's Sync and Close return it, with 2 servers
// and with 8 servers of 1024 ranks.
func TestWriteErrorReachesEveryRank(t *testing.T) {
	writeErrorEverywhere(t, 10, 2)
	writeErrorEverywhere(t, 1024, 8)
}

func writeErrorEverywhere(t *testing.T, ranks, servers int) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	var mu sync.Mutex
	var syncErrs, closeErrs int
	world(t, ranks, 16, servers, Config{}, func(c comm.Comm, s *Session) error {
		f, err := openAll(c, s, "faulty:ufs:"+path, map[string]string{"collio_fault": "eio_offset=5000"})
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(pattern(4096, c.Rank()), int64(c.Rank()*4096)); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		serr := f.Sync()
		cerr := f.Close()
		mu.Lock()
		if serr != nil {
			syncErrs++
		}
		if cerr != nil {
			closeErrs++
		}
		mu.Unlock()
		if cerr == nil || serr == nil || !errors.Is(serr, ioerr.ErrIO) || !errors.Is(cerr, ioerr.ErrIO) {
			return fmt.Errorf("rank %d: sync %v, close %v; want the write error from both", c.Rank(), serr, cerr)
		}
		return nil
	})
	require.Equal(t, ranks-servers, syncErrs)
	require.Equal(t, ranks-servers, closeErrs)
}

// TestReadsStealQueuedWrites: with the file system slowed down, a rank's
// rewrites of one range meet in the queue (morphing) and its read right
// after finds the bytes there.
func TestReadsStealQueuedWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	world(t, 5, 5, 1, Config{Buffer: 1 << 20}, func(c comm.Comm, s *Session) error {
		f, err := openAll(c, s, "faulty:ufs:"+path, map[string]string{"collio_fault": "slow=write:100ms"})
		if err != nil {
			return err
		}
		r := c.Rank()
		var p []byte
		for k := range 4 {
			p = pattern(1000, r*10+k)
			if _, err := f.WriteAt(p, int64(r*1000)); err != nil {
				return err
			}
		}
		got := make([]byte, 1000)
		if _, err := f.ReadAt(got, int64(r*1000)); err != nil {
			return err
		}
		if !bytes.Equal(got, p) {
			return fmt.Errorf("rank %d: the read does not see the last write", r)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if r == 0 {
			st, err := s.Stats()
			if err != nil {
				return err
			}
			if st.Stolen == 0 || st.Morphed == 0 {
				return fmt.Errorf("no read stolen or no byte morphed with a slow file system: %+v", st)
			}
		}
		return nil
	})
}

// TestRandomProperty: random writes (each rank in its own region, with
// rewrites), reads checked against the rank's own oracle at once, random
// buffer sizes and units; after close the file equals the oracles.
func TestRandomProperty(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			ranks := 4 + rng.IntN(60)
			servers := 1 + rng.IntN(min(8, ranks-1))
			if seed == 0 {
				ranks, servers = 1024, 8
			}
			compute := ranks - servers
			region := 1 + rng.IntN(3000)
			buffer := int64(MinBuffer + rng.IntN(1<<16))
			path := filepath.Join(t.TempDir(), "f")
			oracles := make([][]byte, compute)
			world(t, ranks, 1+rng.IntN(8), servers, Config{Buffer: buffer}, func(c comm.Comm, s *Session) error {
				r := c.Rank()
				rr := rand.New(rand.NewPCG(seed, uint64(r)))
				f, err := openAll(c, s, "ufs:"+path, map[string]string{"striping_unit": "0"})
				if err != nil {
					return err
				}
				base := int64(r * region)
				mine := make([]byte, region)
				for range 1 + rr.IntN(12) {
					off := rr.IntN(region)
					n := 1 + rr.IntN(region-off)
					if rr.IntN(4) == 0 {
						// A batch of reads: runs of up to three buffers.
						var runs []driver.Run
						var want []byte
						for range 1 + rr.IntN(3) {
							o := rr.IntN(region)
							run := driver.Run{Off: base + int64(o)}
							for range 1 + rr.IntN(3) {
								k := rr.IntN(region - o + 1)
								run.Bufs = append(run.Bufs, bytes.Repeat([]byte{0xee}, k))
								want = append(want, mine[o:o+k]...)
								o += k
							}
							runs = append(runs, run)
						}
						n, err := f.(driver.RunReader).ReadRuns(runs)
						if err != nil {
							return err
						}
						var got []byte
						for _, run := range runs {
							got = bytes.Join(append([][]byte{got}, run.Bufs...), nil)
						}
						if !bytes.Equal(got, want) || n > int64(len(want)) {
							return fmt.Errorf("rank %d: a batch of reads differs from its writes (%d bytes read of %d)", r, n, len(want))
						}
						continue
					}
					if rr.IntN(3) == 0 {
						got := make([]byte, n)
						if _, err := f.ReadAt(got, base+int64(off)); err != nil && !errors.Is(err, io.EOF) {
							return err
						}
						if !bytes.Equal(got, mine[off:off+n]) {
							return fmt.Errorf("rank %d: read [%d,+%d) differs from its writes", r, off, n)
						}
						continue
					}
					p := make([]byte, n)
					for i := range p {
						p[i] = byte(1 + rr.IntN(255))
					}
					if rr.IntN(2) == 0 {
						copy(mine[off:], p)
						if _, err := f.WriteAt(p, base+int64(off)); err != nil {
							return err
						}
						continue
					}
					// A batch of runs, later ones overlapping earlier ones,
					// each of up to three buffers.
					var runs []driver.Run
					for range 1 + rr.IntN(4) {
						o := rr.IntN(region)
						run := driver.Run{Off: base + int64(o)}
						for range 1 + rr.IntN(3) {
							k := rr.IntN(region - o + 1)
							b := make([]byte, k)
							for i := range b {
								b[i] = byte(1 + rr.IntN(255))
							}
							copy(mine[o:], b)
							o += k
							run.Bufs = append(run.Bufs, b)
						}
						runs = append(runs, run)
					}
					if _, err := f.(driver.RunWriter).WriteRuns(runs); err != nil {
						return err
					}
				}
				oracles[r] = mine
				return f.Close()
			})
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			want := bytes.Join(oracles, nil)
			got = append(got, make([]byte, max(0, len(want)-len(got)))...)
			require.True(t, bytes.Equal(want, got[:len(want)]), "ranks %d servers %d region %d buffer %d", ranks, servers, region, buffer)
		})
	}
}

// TestCacheUnderServers: with e10_cache, the servers write through the
// E10 cache (its file is left in the cache directory when asked to keep
// it) and the global file gets every byte.
func TestCacheUnderServers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	cacheDir := filepath.Join(dir, "cache")
	params := map[string]string{"e10_cache": "enable", "e10_cache_path": cacheDir, "e10_cache_discard_flag": "disable"}
	world(t, 6, 3, 2, Config{}, func(c comm.Comm, s *Session) error {
		f, err := openAll(c, s, "ufs:"+path, params)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(pattern(3<<20, c.Rank()), int64(c.Rank()*(3<<20))); err != nil {
			return err
		}
		return f.Close()
	})
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	for r := range 4 {
		require.True(t, bytes.Equal(pattern(3<<20, r), got[r*(3<<20):(r+1)*(3<<20)]), "rank %d", r)
	}
	entries, err := os.ReadDir(cacheDir)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "no cache file: the servers did not write through the cache")
}

// TestSplitHintsErrors: bad values name the hint and the value; a count
// from the hint or a percentage splits as asked.
func TestSplitHintsErrors(t *testing.T) {
	err := comm.RunWorld(4, 2, func(c comm.Comm) error {
		for v, want := range map[string]string{"abc": `collio_io_servers="abc"`, "4": "leave no compute rank", "100%": "percentage"} {
			if _, err := SplitHints(c, 0, map[string]string{"collio_io_servers": v}); err == nil || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("collio_io_servers=%s: error %v, want one saying %q", v, err, want)
			}
		}
		if _, err := SplitHints(c, 1, map[string]string{"collio_io_server_buffer": "1k"}); err == nil || !strings.Contains(err.Error(), "collio_io_server_buffer") {
			return fmt.Errorf("collio_io_server_buffer=1k: error %v, want one naming the hint", err)
		}
		cc, err := SplitHints(c, 0, map[string]string{"collio_io_servers": "25%"})
		if err != nil || cc == nil {
			return err // a server rank, stopped
		}
		if cc.Size() != 3 {
			return fmt.Errorf("25%% of 4 ranks left %d compute ranks, want 3", cc.Size())
		}
		return Stop(cc)
	})
	require.NoError(t, err)
}
