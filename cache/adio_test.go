package cache_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"

	_ "github.com/collio/collio/driver/faulty"
	_ "github.com/collio/collio/driver/sim"
	_ "github.com/collio/collio/driver/ufs"
	// The strategies, registered as collio has them.
	_ "github.com/collio/collio/independent"
	_ "github.com/collio/collio/segment"
	_ "github.com/collio/collio/tam"
	_ "github.com/collio/collio/twophase"
)

const ranks = 4

func rankData(rank, pass int, n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rank*37 + pass*101 + i*7 + i/251)
	}
	return b
}

// views are file views of 4 ranks for two passes. With overlap the
// second pass is shifted a little, so it overwrites part of the first;
// otherwise it goes 1 MiB further, to a region nothing cached.
var views = map[string]func(r, pass int, overlap bool) adio.View{
	// Each rank a contiguous block.
	"blocks": func(r, pass int, overlap bool) adio.View {
		return adio.View{Disp: int64(r*3000) + shift(pass, overlap, 700), Etype: layout.Byte, Filetype: layout.Byte}
	},
	// Interleaved 64-byte records.
	"interleaved": func(r, pass int, overlap bool) adio.View {
		ft := must(layout.Resized(layout.Bytes(64), 0, 256))
		return adio.View{Disp: int64(64*r) + shift(pass, overlap, 16), Etype: layout.Byte, Filetype: ft}
	},
	// 24 bytes of every 256 per rank: holes, so aggregators read-modify-
	// write, and with overlap the second pass's reads hit cached data.
	"holes": func(r, pass int, overlap bool) adio.View {
		ft := must(layout.Resized(layout.Bytes(24), 0, 256))
		return adio.View{Disp: int64(64*r) + shift(pass, overlap, 10), Etype: layout.Byte, Filetype: ft}
	},
}

func shift(pass int, overlap bool, by int64) int64 {
	switch {
	case pass == 0:
		return 0
	case overlap:
		return by
	}
	return 1 << 20
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func world(t *testing.T, fn func(c comm.Comm) error) {
	t.Helper()
	require.NoError(t, comm.RunWorldTimeout(ranks, 0, 20*time.Second, fn))
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// workload is two collective writes through a view.
type workload struct {
	view    string
	overlap bool
	atomic  bool
	// readBack: each rank reads what it wrote in the second pass, before
	// any sync, with an independent read (only its own cache is consulted:
	// right when each rank writes its own data, as with the independent
	// strategy).
	readBack bool
	// readAll: the same with a collective read, whose aggregators read
	// what other ranks' caches still hold (drained first).
	readAll bool
}

// expected is the file the workload writes.
func (w workload) expected() []byte { return expectedFile(w.view, w.overlap, 2) }

// expectedFile is the file that passes of collective writes through a
// view write, built by the independent reference expander (refmodel) from
// the views and data alone, with no collio write path involved: each pass
// over the one before, each rank's bytes at the file offsets of its view.
func expectedFile(view string, overlap bool, passes int) []byte {
	var file []byte
	for pass := range passes {
		for r := range ranks {
			v := views[view](r, pass, overlap)
			data := rankData(r, pass, 1500)
			offs := refmodel.FileOffsets(refmodel.Access{Disp: v.Disp, Filetype: v.Filetype, Size: int64(len(data))})
			for i, off := range offs {
				if off >= int64(len(file)) {
					file = append(file, make([]byte, off+1-int64(len(file)))...)
				}
				file[off] = data[i]
			}
		}
	}
	return file
}

// run writes the workload to path with hints h.
func (w workload) run(t *testing.T, path string, h map[string]string) {
	t.Helper()
	world(t, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		if w.atomic {
			if err := f.SetAtomicity(true); err != nil {
				return err
			}
		}
		for pass := 0; pass < 2; pass++ {
			if err := f.SetView(views[w.view](c.Rank(), pass, w.overlap), nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), pass, 1500)), 0); err != nil {
				return err
			}
		}
		if w.readBack || w.readAll {
			got := make([]byte, 1500)
			read := f.ReadAt
			if w.readAll {
				read = f.ReadAtAll
			}
			if _, err := read(adio.Bytes(got), 0); err != nil {
				return err
			}
			if !bytes.Equal(got, rankData(c.Rank(), 1, 1500)) {
				return fmt.Errorf("rank %d does not read back what it wrote", c.Rank())
			}
		}
		return f.Close()
	})
}

var strategies = map[string]map[string]string{
	"twophase":    {"collio_strategy": "twophase", "cb_config_list": "*:*", "cb_nodes": "2", "romio_cb_write": "enable", "cb_buffer_size": "2048"},
	"twophase1":   {"collio_strategy": "twophase", "cb_config_list": "*:*", "cb_nodes": "1", "romio_cb_write": "enable", "cb_buffer_size": "2048"},
	"twophase4":   {"collio_strategy": "twophase", "cb_config_list": "*:*", "cb_nodes": "4", "romio_cb_write": "enable", "cb_buffer_size": "2048"},
	"dynamic":     {"collio_strategy": "dynamic", "cb_buffer_size": "4096"},
	"independent": {"collio_strategy": "independent"},
}

// The global file is byte for byte the same with and without the cache,
// for several views and strategies, every flush policy and 1..4 workers.
// A second collective pass over data some cache still holds drains it
// first, so passes that overlap are right whichever aggregators wrote
// them, and collective reads see them. (An independent read sees this
// rank's cache only: data other ranks cached becomes visible once copied,
// at sync at the latest; see e10_cache's documentation.)
func TestSameBytesWithAndWithoutCache(t *testing.T) {
	cases := []struct {
		strategy string
		w        workload
		mode     string
	}{
		{"independent", workload{readBack: true}, "enable"},
		{"independent", workload{overlap: true, readBack: true}, "coherent"},
		{"twophase1", workload{overlap: true}, "enable"},
		{"twophase", workload{}, "enable"},
		{"twophase", workload{overlap: true, readAll: true}, "enable"},
		{"twophase4", workload{overlap: true, readAll: true}, "enable"},
		{"dynamic", workload{}, "enable"},
		{"dynamic", workload{overlap: true, readAll: true}, "enable"},
		{"twophase4", workload{overlap: true}, "coherent"},
		{"twophase", workload{overlap: true, atomic: true}, "coherent"},
	}
	n := 0
	for _, vname := range []string{"blocks", "interleaved", "holes"} {
		for _, tc := range cases {
			w := tc.w
			w.view = vname
			want := w.expected()
			for _, flush := range []string{"flush_immediate", "flush_onclose", "flush_none"} {
				threads := 1 + n%4
				n++
				t.Run(fmt.Sprintf("%s/%s/%s/%s/threads%d", vname, tc.strategy, tc.mode, flush, threads), func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(t.TempDir(), "f")
					h := merge(strategies[tc.strategy], map[string]string{"e10_cache": tc.mode, "e10_cache_path": dir,
						"e10_cache_flush_flag": flush, "e10_cache_threads": fmt.Sprint(threads),
						"ind_wr_buffer_size": "1000"})
					w.run(t, path, h)
					require.Equal(t, want, must(os.ReadFile(path)))
					es, _ := os.ReadDir(dir)
					require.Empty(t, es, "cache files left")
				})
			}
		}
	}
}

// sameOnAll runs fn on every rank and requires the same error text.
func sameOnAll(t *testing.T, fn func(c comm.Comm) error) []error {
	t.Helper()
	errs := make([]error, ranks)
	world(t, func(c comm.Comm) error {
		errs[c.Rank()] = fn(c)
		return nil
	})
	for r := 1; r < ranks; r++ {
		require.Equal(t, fmt.Sprint(errs[0]), fmt.Sprint(errs[r]), "rank %d's error differs", r)
	}
	return errs
}

// A copy that fails on one rank's global file (EIO, ENOSPC, short
// write) is the error of Sync, or Close, on every rank.
func TestCopyErrorOnEveryRank(t *testing.T) {
	cases := []struct {
		rule       string
		class      *ioerr.Class
		closeFails bool // the retry at close fails too
	}{
		{"eio_call=write:1", ioerr.ErrIO, false},
		{"enospc_after=100", ioerr.ErrNoSpace, true},
		{"short_write=1", ioerr.ErrIO, false},
	}
	for _, tc := range cases {
		for _, flush := range []string{"flush_immediate", "flush_onclose"} {
			t.Run(tc.rule+"/"+flush, func(t *testing.T) {
				dir := t.TempDir()
				path := "faulty:" + filepath.Join(t.TempDir(), "f")
				h := merge(strategies["twophase"], map[string]string{"cb_nodes": "4", "e10_cache": "enable",
					"e10_cache_path": dir, "e10_cache_flush_flag": flush,
					"collio_fault": tc.rule, "collio_fault_ranks": "1"})
				var mu sync.Mutex
				closeErrs := map[int]error{}
				errs := sameOnAll(t, func(c comm.Comm) error {
					f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
					if err != nil {
						return err
					}
					if err := f.SetView(views["interleaved"](c.Rank(), 0, false), nil); err != nil {
						return err
					}
					if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), 0, 1500)), 0); err != nil {
						return fmt.Errorf("the cached write failed: %w", err)
					}
					serr := f.Sync()
					cerr := f.Close()
					mu.Lock()
					closeErrs[c.Rank()] = cerr
					mu.Unlock()
					return serr
				})
				for r, err := range errs {
					require.ErrorIs(t, err, tc.class, "rank %d", r)
					require.Contains(t, err.Error(), "copying bytes")
					if tc.closeFails {
						require.ErrorIs(t, closeErrs[r], tc.class, "rank %d", r)
					} else {
						require.NoError(t, closeErrs[r], "rank %d", r)
					}
				}
				es, _ := os.ReadDir(dir)
				if tc.closeFails {
					require.Len(t, es, 2, "rank 1's cache and journal stay for recovery")
				} else {
					require.Empty(t, es)
				}
			})
		}
	}
}

// If one rank cannot open its cache, no rank uses one; rank 0 says so
// once and the data is the same.
func TestOpenFallback(t *testing.T) {
	dir := t.TempDir()
	w := workload{view: "holes", overlap: true}
	path := filepath.Join(t.TempDir(), "f")
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": "faulty:" + dir,
		"collio_fault": "eio_call=open:1+", "collio_fault_ranks": "2"})
	var stderr syncBuffer
	world(t, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h, Stderr: &stderr})
		if err != nil {
			return err
		}
		if got := f.Info()["e10_cache"]; got != "disable" {
			return fmt.Errorf("e10_cache reads %q after the fallback", got)
		}
		if _, ok := cache.StatsOf(f.DriverFile()); ok {
			return fmt.Errorf("rank %d still has a cache", c.Rank())
		}
		if w := f.Hints().Warnings(); !slices.ContainsFunc(w, func(s string) bool {
			return strings.Contains(s, "rank 2") && strings.Contains(s, "could not be used")
		}) {
			return fmt.Errorf("rank %d's warnings do not say why the cache was dropped: %q", c.Rank(), w)
		}
		return f.Close()
	})
	require.Equal(t, 1, strings.Count(stderr.String(), "e10_cache: the cache could not be used"), stderr.String())
	es, _ := os.ReadDir(dir)
	require.Empty(t, es)
	w.run(t, path, h)
	require.Equal(t, w.expected(), must(os.ReadFile(path)))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With deferred close, Close returns before the copy is done; the next
// open of the same file waits for it.
func TestDeferredCloseNextOpenWaits(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(t.TempDir(), "f")
	w := workload{view: "blocks"}
	want := w.expected()
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": dir,
		"e10_cache_flush_flag": "flush_onclose", "e10_cache_deferred_close": "enable",
		"collio_fault": "slow=write:40ms"})
	w.run(t, "faulty:"+plain, h)
	// The copies (40 ms a write) are still running when the closes return;
	// the next open must have waited for them: once it returns, the file is
	// complete.
	world(t, func(c comm.Comm) error {
		f, err := adio.Open(c, plain, adio.ModeRdOnly, adio.OpenOptions{})
		if err != nil {
			return err
		}
		if got := must(os.ReadFile(plain)); !bytes.Equal(got, want) {
			f.Close()
			return fmt.Errorf("rank %d: the open returned before the deferred copies were done", c.Rank())
		}
		return f.Close()
	})
	require.NoError(t, cache.WaitAll())
	s := cache.Totals()
	require.Positive(t, s.FinalWait)
}

// The crash test: a child process (all four ranks) writes through the
// cache and is killed before Close: with flush_onclose before any copy,
// with flush_immediate in the middle of the copies (the global file is
// slow). collio recover (cache.Recover) then completes the global file.
func TestCrashThenRecover(t *testing.T) {
	if spec := os.Getenv("COLLIO_CACHE_CRASH_CHILD"); spec != "" {
		crashChild(spec)
		return
	}
	want := crashWork.expected()
	for _, flush := range []string{"flush_onclose", "flush_immediate"} {
		t.Run(flush, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(t.TempDir(), "f")
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashThenRecover$", "-test.count=1")
			cmd.Env = append(os.Environ(), "COLLIO_CACHE_CRASH_CHILD="+dir+"|"+path+"|"+flush)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			sc := bufio.NewScanner(out)
			ready := false
			for sc.Scan() {
				if sc.Text() == "READY" {
					ready = true
					break
				}
			}
			require.True(t, ready, "the child did not get to its writes")
			if flush == "flush_immediate" { // kill once some copies are done (most take ~1 s more)
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if b, _ := os.ReadFile(path); len(b) > bytes.Count(b, []byte{0}) {
						break
					}
				}
			}
			require.NoError(t, cmd.Process.Kill())
			cmd.Wait()

			before, _ := os.ReadFile(path)
			require.NotEqual(t, want, before, "the data reached the global file before the kill")
			if flush == "flush_immediate" {
				require.NotZero(t, len(before)-bytes.Count(before, []byte{0}), "no copy had started: not mid-copy")
			}
			res, err := cache.Recover(dir, cache.RecoverOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, res)
			for _, r := range res {
				require.NoError(t, r.Err)
			}
			require.Equal(t, want, must(os.ReadFile(path)))
			es, _ := os.ReadDir(dir)
			require.Empty(t, es)
		})
	}
}

var crashWork = workload{view: "holes"}

func crashChild(spec string) {
	parts := strings.Split(spec, "|")
	dir, path, flush := parts[0], parts[1], parts[2]
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": dir,
		"e10_cache_flush_flag": flush, "ind_wr_buffer_size": "256"})
	if flush == "flush_immediate" {
		path = "faulty:" + path
		h["collio_fault"] = "slow=write:20ms"
	}
	var wg sync.WaitGroup
	wg.Add(ranks)
	go comm.RunWorld(ranks, 0, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		for pass := 0; pass < 2; pass++ {
			f.SetView(views[crashWork.view](c.Rank(), pass, crashWork.overlap), nil)
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), pass, 1500)), 0); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(3)
			}
		}
		wg.Done()
		select {} // killed before Close
	})
	wg.Wait()
	fmt.Println("READY")
	select {}
}

// Over the sim driver (an emulated striped file system, the global file
// of the benchmarks) the cache gives the same bytes and reports how long
// Sync and Close waited.
func TestOverSim(t *testing.T) {
	sim := map[string]string{"collio_sim_latency": "0", "collio_sim_lock_latency": "0", "collio_sim_bandwidth": "0",
		"collio_sim_stripe_size": "4096"}
	var mu sync.Mutex
	var stats []cache.Stats
	write := func(path string, h map[string]string) {
		world(t, func(c comm.Comm) error {
			f, err := adio.Open(c, "sim:"+path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			if err := f.SetView(views["interleaved"](c.Rank(), 0, false), nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), 0, 1500)), 0); err != nil {
				return err
			}
			if err := f.Sync(); err != nil {
				return err
			}
			if s, ok := cache.StatsOf(f.DriverFile()); ok {
				mu.Lock()
				stats = append(stats, s)
				mu.Unlock()
			}
			return f.Close()
		})
	}
	want := expectedFile("interleaved", false, 1)
	plain := filepath.Join(t.TempDir(), "plain")
	write(plain, merge(strategies["twophase"], sim))
	require.Equal(t, want, must(os.ReadFile(plain)))
	require.Empty(t, stats)
	path := filepath.Join(t.TempDir(), "f")
	write(path, merge(merge(strategies["twophase"], sim), map[string]string{"e10_cache": "enable",
		"e10_cache_path": t.TempDir(), "e10_cache_threads": "2"}))
	require.Equal(t, want, must(os.ReadFile(path)))
	require.Len(t, stats, ranks)
	var cached int64
	for _, s := range stats {
		require.Equal(t, int64(1), s.Syncs)
		cached += s.CachedBytes
	}
	require.Equal(t, int64(ranks*1500), cached)
}

// A collective read right after a cached collective write (no sync) goes
// through aggregators that may not be the ranks whose caches hold the
// data: the call drains the range first, so each rank reads back what it
// wrote. Here every rank writes its block with two aggregators; then only
// ranks 2 and 3 read theirs, so the read's file domains differ from the
// write's and rank 2's block is read by another aggregator.
func TestCollectiveReadAfterCachedWrite(t *testing.T) {
	for _, flush := range []string{"flush_immediate", "flush_onclose", "flush_none"} {
		t.Run(flush, func(t *testing.T) {
			dir := t.TempDir()
			path := "faulty:" + filepath.Join(t.TempDir(), "f")
			h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": dir,
				"e10_cache_flush_flag": flush, "collio_fault": "slow=write:20ms"})
			var mu sync.Mutex
			var drains int64
			var drained time.Duration
			world(t, func(c comm.Comm) error {
				f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				if err := f.SetView(views["blocks"](c.Rank(), 0, false), nil); err != nil {
					return err
				}
				want := rankData(c.Rank(), 0, 1500)
				if _, err := f.WriteAtAll(adio.Bytes(want), 0); err != nil {
					return err
				}
				got := make([]byte, 1500)
				if c.Rank() < 2 {
					got = got[:0]
				}
				if _, err := f.ReadAtAll(adio.Bytes(got), 0); err != nil {
					return err
				}
				if c.Rank() >= 2 && !bytes.Equal(got, want) {
					return fmt.Errorf("rank %d reads stale bytes of its block", c.Rank())
				}
				last, _ := f.Stats()
				s, _ := cache.StatsOf(f.DriverFile())
				mu.Lock()
				drains += s.Drains
				drained = max(drained, last.CacheDrain)
				mu.Unlock()
				return f.Close()
			})
			if flush != "flush_immediate" { // copies cannot have finished: the read drained
				require.Positive(t, drains)
				require.Positive(t, drained)
			}
		})
	}
}

// A write over a range whose copy failed fails on every rank, before it
// could be copied over by older data, and names the copy.
func TestDrainReportsFailedCopy(t *testing.T) {
	dir := t.TempDir()
	path := "faulty:" + filepath.Join(t.TempDir(), "f")
	h := merge(strategies["twophase"], map[string]string{"cb_nodes": "4", "e10_cache": "enable",
		"e10_cache_path": dir, "e10_cache_flush_flag": "flush_onclose",
		"collio_fault": "eio_call=write:1+", "collio_fault_ranks": "1"})
	errs := sameOnAll(t, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		defer f.Close()
		for pass := 0; pass < 2; pass++ {
			if err := f.SetView(views["interleaved"](c.Rank(), pass, true), nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), pass, 1500)), 0); err != nil {
				return fmt.Errorf("pass %d: %w", pass, err)
			}
		}
		return nil
	})
	for r, err := range errs {
		require.ErrorIs(t, err, ioerr.ErrIO, "rank %d", r)
		require.Contains(t, err.Error(), "pass 1")
		require.Contains(t, err.Error(), "copying bytes")
	}
}

// Deleting a file whose deferred close is still copying waits for the
// copy: nothing writes the file once it is gone, and the cache is
// cleaned up when Delete returns.
func TestDeleteWaitsForDeferredClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "f")
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": dir,
		"e10_cache_flush_flag": "flush_onclose", "e10_cache_deferred_close": "enable",
		"collio_fault": "slow=write:30ms"})
	workload{view: "blocks"}.run(t, "faulty:"+path, h)
	es, _ := os.ReadDir(dir)
	require.NotEmpty(t, es, "the copy finished before Delete: the test shows nothing")
	require.NoError(t, adio.Delete(path))
	es, _ = os.ReadDir(dir)
	require.Empty(t, es, "Delete returned while the deferred close was still copying")
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, cache.WaitAll())
}

// IOR's pattern: call k writes transfer k of every rank's block, so the
// calls' overall ranges overlap but no rank's range meets cached data:
// nothing is drained (the copies stay behind the application), and the
// file is right.
func TestNoDrainForDisjointCalls(t *testing.T) {
	const block, xfer = 4096, 1024
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "f")
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": dir,
		"e10_cache_flush_flag": "flush_onclose"})
	var mu sync.Mutex
	var drains int64
	world(t, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		for k := 0; k < block/xfer; k++ {
			off := int64(c.Rank()*block + k*xfer)
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), k, xfer)), off); err != nil {
				return err
			}
		}
		s, _ := cache.StatsOf(f.DriverFile())
		mu.Lock()
		drains += s.Drains
		mu.Unlock()
		return f.Close()
	})
	require.Zero(t, drains)
	got := must(os.ReadFile(path))
	require.Len(t, got, ranks*block)
	for r := range ranks {
		for k := 0; k < block/xfer; k++ {
			off := r*block + k*xfer
			require.Equal(t, rankData(r, k, xfer), got[off:off+xfer], "rank %d transfer %d", r, k)
		}
	}
}

// When one rank's cache runs out of space during a collective write, that
// rank writes through at once and every rank follows from the next
// collective call: rank 0 says so once, Info reports e10_cache=disable,
// and the file is what it would be without the cache.
func TestFallbackOnOneRankReachesAll(t *testing.T) {
	w := workload{view: "interleaved", overlap: true}
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "f")
	h := merge(strategies["twophase"], map[string]string{"cb_nodes": "4", "e10_cache": "enable",
		"e10_cache_path": "faulty:" + dir, "e10_cache_flush_flag": "flush_onclose",
		"collio_fault": "enospc_after=1000", "collio_fault_ranks": "1"})
	var stderr syncBuffer
	var mu sync.Mutex
	fellBack := 0
	world(t, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h, Stderr: &stderr})
		if err != nil {
			return err
		}
		for pass := 0; pass < 2; pass++ {
			if err := f.SetView(views[w.view](c.Rank(), pass, w.overlap), nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(rankData(c.Rank(), pass, 1500)), 0); err != nil {
				return err
			}
		}
		if s, _ := cache.StatsOf(f.DriverFile()); s.Fallback {
			mu.Lock()
			fellBack++
			mu.Unlock()
		}
		if got := f.Info()["e10_cache"]; got != "disable" {
			return fmt.Errorf("rank %d: e10_cache reads %q after the fallback", c.Rank(), got)
		}
		return f.Close()
	})
	require.Equal(t, ranks, fellBack, "every rank writes through after the second call's entry")
	require.Equal(t, 1, strings.Count(stderr.String(), "every rank writes"), stderr.String())
	require.Equal(t, w.expected(), must(os.ReadFile(path)))
}

// A rank that refuses its cache files as unsafe (here another user's
// symbolic link at rank 2's cache name) fails the open on every rank
// with its error, which names the path and the reason, instead of the
// fallback to direct writes; this holds when a lower rank's cache failed
// otherwise (rank 1: an injected EIO). The link's target keeps its data
// and nothing is written to the global file.
func TestUnsafeCacheFailsOpenOnEveryRank(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("simulating another user's files needs root (chown)")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	target := filepath.Join(t.TempDir(), "precious")
	want := []byte("the user's own data, not to be touched")
	require.NoError(t, os.WriteFile(target, want, 0o644))
	path := filepath.Join(t.TempDir(), "f")
	cp, _ := cache.Names(dir, path, 2)
	require.NoError(t, os.Symlink(target, cp))
	require.NoError(t, os.Lchown(cp, 65534, 65534))
	h := merge(strategies["twophase"], map[string]string{"e10_cache": "enable", "e10_cache_path": "faulty:" + dir,
		"collio_fault": "eio_call=open:1+", "collio_fault_ranks": "1"})
	errs := make([]error, ranks)
	var stderr syncBuffer
	require.NoError(t, comm.RunWorldTimeout(ranks, 0, 20*time.Second, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Hints: h, Stderr: &stderr})
		if err == nil {
			f.WriteAtAll(adio.Bytes(rankData(c.Rank(), 0, 1500)), int64(c.Rank())*1500)
			f.Close()
		}
		errs[c.Rank()] = err
		return nil
	}))
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		require.ErrorIs(t, err, ioerr.ErrAccess, "rank %d", r)
		require.ErrorContains(t, err, "cache: refusing "+cp+": the cache file is a symbolic link", "rank %d", r)
	}
	require.NotContains(t, stderr.String(), "could not be used")
	require.Equal(t, want, must(os.ReadFile(target)))
	require.Empty(t, must(os.ReadFile(path)))
}
