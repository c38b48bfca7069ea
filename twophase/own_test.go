package twophase

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

func reports(cases []rankCase, grid int64) []coll.OwnBlocks {
	own := make([]coll.OwnBlocks, len(cases))
	for r, rc := range cases {
		own[r] = CountOwnBlocks(rc.Access, grid)
	}
	return own
}

func byteView(t *testing.T, lens, displs []int) coll.Access {
	t.Helper()
	ft := refmodel.Must(layout.Indexed(lens, displs, layout.Byte))
	return coll.Access{Filetype: ft, Size: ft.Size(), Count: ft.Size()}
}

func TestCountOwnBlocks(t *testing.T) {
	// Runs [10,20) [30,50) [64,70) [200,201) at grid 16: blocks 0, 1, 2
	// (shared by two runs, counted once), 4, 12.
	a := byteView(t, []int{10, 20, 6, 1}, []int{10, 30, 64, 200})
	got := CountOwnBlocks(a, 16)
	var want uint64
	for _, b := range []int64{0, 1, 2, 3, 4, 12} {
		want += blockHash(b)
	}
	// [30,50) touches blocks 1, 2 and 3; [64,70) block 4.
	require.Equal(t, coll.OwnBlocks{Count: 6, Hash: want}, got)

	// From the middle of the view: the data from byte 15 on, [45,50) ...
	a.DataStart, a.Size = 15, a.Size-15
	got = CountOwnBlocks(a, 16)
	require.Equal(t, int64(4), got.Count, "blocks 2, 3 (of [45,50)), 4 and 12")

	require.Equal(t, coll.OwnBlocks{}, CountOwnBlocks(coll.Access{Filetype: layout.Byte}, 16), "no data: nothing")

	// More runs than the budget: not counted.
	lens, displs := make([]int, ownRunBudget+1), make([]int, ownRunBudget+1)
	for i := range lens {
		lens[i], displs[i] = 1, 2*i
	}
	require.Equal(t, int64(-1), CountOwnBlocks(byteView(t, lens, displs), 16).Count)

	require.Equal(t, int64(64<<10), OwnGrid(0))
	require.Equal(t, int64(3<<20), OwnGrid(3<<20), "a stripe above 64 KiB")
	require.Equal(t, int64(96000), OwnGrid(48000), "rounded up to a multiple of the stripe")
}

func TestOwnBlocksTile(t *testing.T) {
	span := coll.Range{Start: 0, End: 64}
	at := func(lens, displs []int) coll.OwnBlocks { return CountOwnBlocks(byteView(t, lens, displs), 16) }
	a, b := at([]int{16, 16}, []int{0, 32}), at([]int{16, 16}, []int{16, 48})
	require.True(t, OwnBlocksTile(span, 16, []coll.OwnBlocks{a, b, {}}), "two ranks alternate whole blocks, one has none")

	shared := at([]int{20}, []int{0}) // blocks 0 and 1
	rest := at([]int{44}, []int{20})  // blocks 1, 2, 3
	require.False(t, OwnBlocksTile(span, 16, []coll.OwnBlocks{shared, rest}), "block 1 is shared")

	require.False(t, OwnBlocksTile(span, 16, []coll.OwnBlocks{a}), "blocks 1 and 3 have no data")

	// Block 1 twice and block 3 never: the count fits, the hash does not.
	twice := at([]int{16}, []int{16})
	require.False(t, OwnBlocksTile(span, 16, []coll.OwnBlocks{a, twice, twice}))

	require.False(t, OwnBlocksTile(span, 16, []coll.OwnBlocks{a, {Count: -1}}), "a rank that did not count")
	require.False(t, OwnBlocksTile(coll.Range{}, 16, nil))
}

// coll_perf's layout with own blocks: no plan, nothing exchanged, the
// same file; and a view with holes inside a rank's own blocks is written
// run by run, never read-modify-written.
func TestOwnBlocksRun(t *testing.T) {
	cases := collperf2x2()
	// One round of 8 blocks per rank, or 4 rounds of 2.
	for _, buf := range []int64{4096, 1024} {
		path := filepath.Join(t.TempDir(), "f")
		stats, err := runCollective(t, path, cases, seq(4), buf, true, 0, func(j *ruledJob) {
			j.AffinityBlock, j.OwnGrid, j.Own = 512, 512, reports(cases, 512)
		})
		require.NoError(t, err)
		got, _ := os.ReadFile(path)
		require.Equal(t, refmodel.ExpectedFile(cases), got)
		for r, s := range stats {
			require.Equal(t, "own blocks: every rank's data in blocks of 512 B no other rank touches, no exchange", s.Domains, "rank %d", r)
			require.Zero(t, s.BytesSent)
			require.Positive(t, s.IO)
			require.Equal(t, int(4096/buf), s.Rounds)
		}
	}

	// Rank r writes bytes 4..11 of blocks r, r+2 (of 16 bytes): holes in
	// its own blocks, which a read-modify-write would cover.
	holes := make([]rankCase, 2)
	for r := range holes {
		a := byteView(t, []int{8, 8}, []int{16*r + 4, 16*(r+2) + 4})
		a.Buf = refmodel.Fill(16, r)
		holes[r] = rankCase{Access: a, Data: a.Buf}
	}
	path := filepath.Join(t.TempDir(), "h")
	stats, err := runCollective(t, path, holes, seq(2), 64, true, 0, func(j *ruledJob) {
		j.OwnGrid, j.Own = 16, reports(holes, 16)
	})
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(holes), got)
	for _, s := range stats {
		require.Contains(t, s.Domains, "own blocks")
		require.Zero(t, s.RMW, "no read-modify-write")
	}
}

// Own blocks need every rank with data to aggregate; otherwise the call
// is planned as usual.
func TestOwnBlocksNeedAggregators(t *testing.T) {
	cases := collperf2x2()
	path := filepath.Join(t.TempDir(), "f")
	stats, err := runCollective(t, path, cases, []int{0, 3}, 4096, true, 0, func(j *ruledJob) {
		j.AffinityBlock, j.OwnGrid, j.Own = 512, 512, reports(cases, 512)
	})
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(cases), got)
	require.NotContains(t, stats[0].Domains, "own blocks")
}

// failingWrites is a file whose vectored writes fail from the n-th on.
type failingWrites struct {
	driver.File
	left *atomic.Int64
}

func (f failingWrites) WriteV(bufs [][]byte, off int64) (int, error) {
	if f.left.Add(-1) < 0 {
		return 0, fmt.Errorf("injected failure at offset %d", off)
	}
	return f.File.WriteV(bufs, off)
}

// countingBatches counts the batches written through it.
type countingBatches struct {
	driver.File
	n, reads *atomic.Int64
}

func (f countingBatches) WriteRuns(runs []driver.Run) (int64, error) {
	f.n.Add(1)
	return driver.WriteRuns(f.File, runs)
}

func (f countingBatches) ReadRuns(runs []driver.Run) (int64, error) {
	f.reads.Add(1)
	return driver.ReadRuns(f.File, runs)
}

// Own mode holds the runs of its rounds and writes (and reads) them in
// batches of heldBufs buffers: with more pieces than that, the call moves
// several batches, all of them, and a failed batch is the call's error.
func TestOwnBlocksHeldRuns(t *testing.T) {
	// Rank r writes the even bytes of blocks r, r+2, r+4, ... (64 bytes):
	// 32 pieces a block, 1312 a rank, held 100 at a time: the last 32 wait
	// for the end of the call.
	defer func(n int) { heldBufs = n }(heldBufs)
	heldBufs = 100
	const grid, blocks = 64, 41
	cases := make([]rankCase, 2)
	for r := range cases {
		var lens, displs []int
		for b := 0; b < blocks; b++ {
			for k := 0; k < grid; k += 2 {
				lens, displs = append(lens, 1), append(displs, (2*b+r)*grid+k)
			}
		}
		a := byteView(t, lens, displs)
		a.Buf = refmodel.Fill(int64(len(lens)), r)
		cases[r] = rankCase{Access: a, Data: a.Buf}
	}
	own := func(j *ruledJob) { j.OwnGrid, j.Own = grid, reports(cases, grid) }
	path := filepath.Join(t.TempDir(), "f")
	var batches, reads atomic.Int64
	stats, err := runCollective(t, path, cases, seq(2), 8*grid, true, 0, own, func(j *ruledJob) {
		j.File = countingBatches{j.File, &batches, &reads}
	})
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(cases), got)
	for r, s := range stats {
		require.Contains(t, s.Domains, "own blocks", "rank %d", r)
		require.Equal(t, (blocks+7)/8, s.Rounds, "rank %d", r)
	}
	// Each window range adds 32 buffers: batches of 100 to 131.
	require.GreaterOrEqual(t, batches.Load(), int64(2*10), "batches of at most 131 buffers")
	require.LessOrEqual(t, batches.Load(), int64(2*14), "batches of at least 100 buffers")
	// Reads are held alike (runCollective reads the data back and checks
	// it). Their runs read the gaps too, so a round of 8 blocks is one run
	// of about 500 buffers, a batch of its own; the last round's one block
	// waits for the end of the call.
	require.Equal(t, int64(2*6), reads.Load(), "read batches")

	// Without batching (the file has only WriteV) every run is its own
	// call: the failure comes after heldBufs of them succeeded, in the
	// batch that the first full hold writes.
	var left atomic.Int64
	left.Store(int64(heldBufs) + 10)
	_, err = runCollective(t, filepath.Join(t.TempDir(), "g"), cases, seq(2), 8*grid, true, 0, own, func(j *ruledJob) {
		j.File = failingWrites{j.File, &left}
	})
	require.ErrorContains(t, err, "injected failure")
}
