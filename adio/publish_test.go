package adio

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

// openNodeCaches opens path on c as a file whose node caches are not
// coherent (as GlusterFS across nodes), with 4-byte records interleaved
// one per rank in each 16-byte tile, so that a write goes through
// two-phase aggregators that write the other ranks' bytes.
func openNodeCaches(c comm.Comm, path string, h map[string]string) (*File, error) {
	h[hints.CollioStrategy] = hints.StrategyTwoPhase
	h["cb_nodes"] = "2"
	f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
	if err != nil {
		return nil, err
	}
	f.nodeCaches = true // what noteNodeCaches finds on such a file system
	ft := must(layout.Resized(layout.Bytes(4), 0, 16))
	return f, f.SetView(View{Disp: int64(4 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil)
}

// A collective write returns while its ranks' syncs go on in the
// background (each sync here takes 300 ms); the rank's next access waits
// for every rank's sync and then sees what it wrote, and so does every
// collective call. With collio_deferred_sync=disable the write waits.
func TestDeferredPublication(t *testing.T) {
	const n = 64 // bytes per rank and call
	for _, deferred := range []string{hints.Enable, hints.Disable} {
		path := "faulty:" + tempPath(t, "pub"+deferred)
		world(t, 4, func(c comm.Comm) error {
			r := c.Rank()
			f, err := openNodeCaches(c, path, map[string]string{"collio_fault": "slow=sync:300ms", hints.CollioDeferredSync: deferred})
			if err != nil {
				return err
			}
			for call := range 3 {
				data := rankData(r+4*call, n)
				if _, err := f.WriteAtAll(Bytes(data), int64(call*n)); err != nil {
					return fmt.Errorf("write %d: %w", call, err)
				}
				if got := f.pub.pending; got != (deferred == hints.Enable) {
					return fmt.Errorf("call %d: pending %v with collio_deferred_sync=%s", call, got, deferred)
				}
				if deferred == hints.Disable && f.last.Publish < 300*time.Millisecond {
					return fmt.Errorf("call %d: the 300 ms sync is not in the call's sync for read-back (%v)", call, f.last.Publish)
				}
				if deferred == hints.Enable {
					if f.pub.board.parent == nil {
						return fmt.Errorf("the board is not a value beside the shared file pointer's")
					}
					v, err := f.pub.board.Add(0)
					if err != nil {
						return err
					}
					if v >= f.pub.board.target {
						return fmt.Errorf("call %d: every sync done (%d of %d) before the write returned", call, v, f.pub.board.target)
					}
				}
				back := make([]byte, n)
				if call == 1 {
					// A collective read settles on the ranks that read
					// the file (its aggregators) before they read.
					if _, err := f.ReadAtAll(Bytes(back), int64(call*n)); err != nil {
						return err
					}
				} else if _, err := f.ReadAt(Bytes(back), int64(call*n)); err != nil {
					return err
				}
				if f.pub.pending && call != 1 {
					return fmt.Errorf("call %d: still pending after a read", call)
				}
				if f.pub.board != nil && !f.pub.pending {
					if v, _ := f.pub.board.Add(0); v < f.pub.board.target {
						return fmt.Errorf("call %d: read before every sync was done (%d of %d)", call, v, f.pub.board.target)
					}
				}
				if !bytes.Equal(back, data) {
					return fmt.Errorf("call %d: read back other bytes", call)
				}
			}
			return f.Close()
		})
	}
}

// A sync that fails in the background is the next access's error, with
// the same text on every rank (naming the rank whose sync failed); the
// file then syncs at the end of each write, and its close fails on every
// rank, since its data may be incomplete.
func TestDeferredPublicationFailure(t *testing.T) {
	path := "faulty:" + tempPath(t, "pubfail")
	var first []string
	errs := sameOnAll(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := openNodeCaches(c, path, map[string]string{"collio_fault": "eio_call=sync:1", "collio_fault_ranks": "2", hints.CollioDeferredSync: hints.Enable})
		if err != nil {
			return err
		}
		if _, err := f.WriteAtAll(Bytes(rankData(r, 64)), 0); err != nil {
			return fmt.Errorf("the write itself failed: %w", err)
		}
		// A write over the same bytes settles: it must not land before
		// the first one.
		_, err = f.WriteAtAll(Bytes(rankData(r, 64)), 0)
		if err == nil {
			return fmt.Errorf("the failed sync was not reported")
		}
		if r == 0 {
			first = append(first, err.Error())
		}
		if f.pub.off == "" {
			return fmt.Errorf("still deferring after a failed sync")
		}
		if _, err := f.WriteAtAll(Bytes(rankData(r, 64)), 128); err != nil {
			return fmt.Errorf("the write after the failure: %w", err)
		}
		return f.Close()
	})
	require.ErrorContains(t, errs[0], "a background sync of a collective write failed", "close reports the loss too")
	require.Len(t, first, 1)
	require.Contains(t, first[0], "rank 2 could not sync")
	require.True(t, strings.Contains(first[0], "collective write 1"), first[0])
}

// A collective write elsewhere in the file goes ahead while earlier
// writes' syncs run (each takes 300 ms here); one over their bytes waits
// for them first, so that it cannot land before them.
func TestDeferredPublicationWaitsWhereItMeets(t *testing.T) {
	const n = 64 // bytes per rank and call: each call covers 4n bytes of file
	path := "faulty:" + tempPath(t, "pubmeet")
	var settled atomic.Int32
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := openNodeCaches(c, path, map[string]string{"collio_fault": "slow=sync:300ms", hints.CollioDeferredSync: hints.Enable})
		if err != nil {
			return err
		}
		for call := range 3 {
			if _, err := f.WriteAtAll(Bytes(rankData(r+4*call, n)), int64(call*n)); err != nil {
				return fmt.Errorf("write %d: %w", call, err)
			}
			// Not settled: the pending span still reaches back to the
			// first write.
			if want := (coll.Range{Start: 0, End: int64(4 * n * (call + 1))}); f.pub.span != want {
				return fmt.Errorf("after write %d: pending span %v, want %v (a write settled)", call, f.pub.span, want)
			}
		}
		target := f.pub.board.target
		again := rankData(r+100, n)
		if _, err := f.WriteAtAll(Bytes(again), n); err != nil {
			return fmt.Errorf("rewrite: %w", err)
		}
		// The ranks that wrote (the aggregators) settled first; the
		// others did not touch the file and still have it pending.
		switch f.pub.span {
		case coll.Range{Start: int64(4 * n), End: int64(8 * n)}:
			if v, _ := f.pub.board.Add(0); v < target {
				return fmt.Errorf("the rewrite of write 1's bytes did not wait for the syncs (%d of %d)", v, target)
			}
			settled.Add(1)
		case coll.Range{Start: 0, End: int64(12 * n)}:
		default:
			return fmt.Errorf("after the rewrite: pending span %v", f.pub.span)
		}
		for call, want := range [][]byte{rankData(r, n), again, rankData(r+8, n)} {
			back := make([]byte, n)
			if _, err := f.ReadAt(Bytes(back), int64(call*n)); err != nil {
				return err
			}
			if !bytes.Equal(back, want) {
				return fmt.Errorf("call %d's bytes read back other", call)
			}
		}
		return f.Close()
	})
	require.NotZero(t, settled.Load(), "no aggregator of the rewrite settled")
}

// Back-to-back deferred writes sync nothing while they go on: each
// rank's delayed sync is taken over by the next write's, and the first
// call over their bytes (a collective read here) starts them all, once per
// rank, and sees every byte.
func TestDeferredWritesSyncOnceWhenNeeded(t *testing.T) {
	defer func(d time.Duration) { publishDelay = d }(publishDelay)
	publishDelay = time.Hour // only a call over the bytes starts the syncs
	const n = 64
	path := "faulty:" + tempPath(t, "pubonce")
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		// A second sync on a rank before close would fail.
		f, err := openNodeCaches(c, path, map[string]string{"collio_fault": "eio_call=sync:2", hints.CollioDeferredSync: hints.Enable})
		if err != nil {
			return err
		}
		for call := range 3 {
			if _, err := f.WriteAtAll(Bytes(rankData(r+4*call, n)), int64(call*n)); err != nil {
				return fmt.Errorf("write %d: %w", call, err)
			}
		}
		if v, err := f.pub.board.Add(0); err != nil || v != 0 {
			return fmt.Errorf("after 3 writes the board holds %d (%v): a sync ran during the writes", v, err)
		}
		back := make([]byte, 3*n)
		if _, err := f.ReadAtAll(Bytes(back), 0); err != nil {
			return fmt.Errorf("the read over the writes: %w", err)
		}
		if want := append(append(rankData(r, n), rankData(r+4, n)...), rankData(r+8, n)...); !bytes.Equal(back, want) {
			return fmt.Errorf("read back other bytes")
		}
		if v, _ := f.pub.board.Add(0); v != f.pub.board.target || v != 3*4 {
			return fmt.Errorf("after the read the board holds %d, target %d, want 12", v, f.pub.board.target)
		}
		if f.pub.off != "" {
			return fmt.Errorf("the file stopped deferring: %s", f.pub.off)
		}
		f.pub.board.failed = false
		_ = f.Close() // its own sync is the second: the fault rule fails it
		return nil
	})
}

// withPendingWrite runs body on each of 4 ranks with a file on node caches
// whose collective write of n bytes per rank at offset n (rankData) still
// waits for its delayed syncs: none starts on its own.
func withPendingWrite(t *testing.T, name string, n int64, body func(f *File, rank int) error) {
	t.Helper()
	defer func(d time.Duration) { publishDelay = d }(publishDelay)
	publishDelay = time.Hour
	path := "faulty:" + tempPath(t, name)
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := openNodeCaches(c, path, map[string]string{hints.CollioDeferredSync: hints.Enable})
		if err != nil {
			return err
		}
		if _, err := f.WriteAtAll(Bytes(rankData(r, n)), n); err != nil {
			return err
		}
		return body(f, r)
	})
}

// An independent transfer elsewhere in the file than the pending writes
// (PnetCDF's header update after a record write) goes ahead without
// waiting for their syncs; one over their bytes waits.
func TestIndependentElsewhereDoesNotSettle(t *testing.T) {
	const n = 64
	withPendingWrite(t, "pubelse", n, func(f *File, r int) error {
		span := f.pub.span // the tiles of data positions n to 2n
		if r == 0 {
			// The view's first tile lies before the write's bytes.
			if _, err := f.WriteAt(Bytes(rankData(9, 4)), 0); err != nil {
				return err
			}
			if !f.pub.pending {
				return fmt.Errorf("a write before the pending span %v settled", span)
			}
		}
		back := make([]byte, n)
		if _, err := f.ReadAtAll(Bytes(back), int64(n)); err != nil {
			return err
		}
		if !bytes.Equal(back, rankData(r, n)) {
			return fmt.Errorf("read back other bytes")
		}
		return f.Close()
	})
}

// MPI_File_get_size does not wait for the delayed syncs (HDF5 asks at each
// flush): the pending writes end by their span's end, which every rank
// knows, so the size is the larger of that and the file system's.
func TestSizeDoesNotWaitForDelayedSyncs(t *testing.T) {
	const n = 64
	withPendingWrite(t, "pubsize", n, func(f *File, _ int) error {
		began := time.Now()
		size, err := f.Size()
		if err != nil {
			return err
		}
		if waited := time.Since(began); waited > time.Second || !f.pub.pending || f.pub.readBack {
			return fmt.Errorf("get_size waited %v for the syncs (pending %v, read back %v)", waited, f.pub.pending, f.pub.readBack)
		}
		if want := f.pub.span.End; size != want || want != 8*n {
			return fmt.Errorf("size %d, want the pending writes' end %d (%d)", size, want, 8*n)
		}
		return f.Close()
	})
}

// A rank that reads back its bytes alone, while the other ranks' syncs
// still wait for their delay, waits for them; the next deferred write's
// agreement then makes every rank sync at the end of each write, so that
// such a program waits for no delay again.
func TestReadBackAloneStopsDeferring(t *testing.T) {
	defer func(d time.Duration) { publishDelay = d }(publishDelay)
	publishDelay = 300 * time.Millisecond
	const n = 64
	path := "faulty:" + tempPath(t, "pubalone")
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := openNodeCaches(c, path, map[string]string{hints.CollioDeferredSync: hints.Enable})
		if err != nil {
			return err
		}
		data := rankData(r, n)
		if _, err := f.WriteAtAll(Bytes(data), 0); err != nil {
			return err
		}
		if r == 0 {
			back := make([]byte, n)
			began := time.Now()
			if _, err := f.ReadAt(Bytes(back), 0); err != nil {
				return err
			}
			if waited := time.Since(began); waited < publishDelay/2 {
				return fmt.Errorf("the read back waited %v: the others' syncs were not delayed", waited)
			}
			if !bytes.Equal(back, data) {
				return fmt.Errorf("read back other bytes")
			}
		}
		if _, err := f.WriteAtAll(Bytes(rankData(r+4, n)), int64(4*n)); err != nil {
			return err
		}
		if f.pub.off == "" {
			return fmt.Errorf("rank %d still defers after rank 0 read back alone", r)
		}
		if _, err := f.WriteAtAll(Bytes(rankData(r+8, n)), int64(8*n)); err != nil {
			return err
		}
		if f.last.Publish == 0 {
			return fmt.Errorf("rank %d: the write after that did not sync before it returned", r)
		}
		return f.Close()
	})
}

// Under the E10 cache where node clients cache (GlusterFS across nodes),
// a copy that has landed is not yet seen by another node: a collective
// read over it makes the copying rank sync the global file first, and
// then every rank reads the bytes. (The cluster tier's TestCacheUnderMPI
// read EOF where the copy had landed but sat in the writer's node.)
func TestCopiedButUnsyncedIsDrained(t *testing.T) {
	const n = 64
	dir := t.TempDir()
	path := "faulty:" + filepath.Join(dir, "f")
	world(t, 4, func(c comm.Comm) error {
		r := c.Rank()
		f, err := openNodeCaches(c, path, map[string]string{
			"e10_cache": "enable", "e10_cache_path": filepath.Join(dir, "cache"),
			"e10_cache_flush_flag": "flush_immediate", "collio_fault": "slow=write:30ms", // copies land after the write returned
		})
		if err != nil {
			return err
		}
		defer f.Close()
		data := rankData(r, n)
		if _, err := f.WriteAtAll(Bytes(data), 0); err != nil {
			return err
		}
		wb, ok := f.writeBack()
		if !ok {
			return fmt.Errorf("rank %d: no E10 cache", r)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if s, e := wb.Pending(); s == e {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("rank %d: the copies never landed", r)
			}
		}
		// The aggregators cached the bytes; their copies landed unsynced.
		unsynced := []int64{0}
		if s, e := wb.Unsynced(); s != e {
			unsynced[0] = 1
		}
		if err := c.AllreduceInt64(unsynced, unsynced, comm.OpSum); err != nil {
			return err
		}
		if unsynced[0] == 0 {
			return fmt.Errorf("no rank has unsynced copies before any sync")
		}
		back := make([]byte, n)
		if r != 1 {
			back = back[:0] // rank 1 reads alone: its aggregator need not be itself
		}
		if _, err := f.ReadAtAll(Bytes(back), 0); err != nil {
			return err
		}
		if r == 1 && !bytes.Equal(back, data) {
			return fmt.Errorf("rank 1 reads back %x, wrote %x", back, data)
		}
		if last, _ := f.Stats(); last.CacheDrain == 0 {
			return fmt.Errorf("rank %d: the read did not stop for the unsynced copies", r)
		}
		if s, e := wb.Unsynced(); s != e {
			return fmt.Errorf("rank %d: [%d, %d) still unsynced after the read's drain", r, s, e)
		}
		return nil
	})
}
