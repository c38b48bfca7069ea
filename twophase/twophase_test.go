package twophase

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// rankCase is one rank's access and its buffer.
type rankCase = refmodel.Case

// runCollective writes (then reads back) every rank's access with the
// two-phase engine on an in-memory world and returns the file and the
// per-rank stats.
// ruledJob is a job and its domain rule, which a test's mods change together.
type ruledJob struct {
	*coll.Job
	DomainRule
}

func runCollective(t testing.TB, path string, cases []rankCase, aggs []int, buf int64, rmw bool, stripe int64, mods ...func(*ruledJob)) ([]metrics.Call, error) {
	n := len(cases)
	stats := make([]metrics.Call, n)
	d := ufs.New()
	want := refmodel.ExpectedFile(cases)
	err := comm.RunWorldTimeout(n, 0, 60*time.Second, func(c comm.Comm) error {
		r := c.Rank()
		f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
		if err != nil {
			return err
		}
		defer f.Close()
		ranges := make([]coll.Range, n)
		for k, rc := range cases {
			offs := fileOffsets(rc.Access)
			if len(offs) > 0 {
				ranges[k] = coll.Range{Start: offs[0], End: offs[len(offs)-1] + 1}
			}
		}
		var total int64
		for _, rc := range cases {
			total += rc.Access.Size
		}
		job := &ruledJob{Job: &coll.Job{Comm: c, File: f, Aggregators: aggs, Ranges: ranges, Access: cases[r].Access,
			BufSize: buf, RMW: rmw, TotalBytes: total, Stats: &stats[r]}, DomainRule: DomainRule{Stripe: stripe}}
		for _, mod := range mods {
			mod(job)
		}
		if err := Write(job.Job, job.DomainRule); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		back := cases[r].Access
		back.Buf = make([]byte, len(back.Buf))
		job.Access = back
		got, err := Read(job.Job, job.DomainRule)
		if err != nil {
			return err
		}
		if got != back.Size {
			return fmt.Errorf("read %d bytes, want %d", got, back.Size)
		}
		// What the file holds there: the rank's own data, or on overlaps
		// that of the highest rank writing the byte.
		fo := fileOffsets(back)
		for i, m := range memOffsets(back) {
			if back.Buf[m] != want[fo[i]] {
				return fmt.Errorf("read back differs at buffer offset %d (file offset %d)", m, fo[i])
			}
		}
		return nil
	})
	return stats, err
}

// A coll_perf-like 3-D block distribution written and read through two
// phases, for several aggregator counts and buffer sizes.
func TestSubarrayBlocks(t *testing.T) {
	g := []int{9, 7, 5}
	for _, np := range []int{1, 3, 4, 6} {
		for _, naggs := range []int{1, 2, np} {
			for _, buf := range []int64{7, 64, 1 << 20} {
				if naggs > np {
					continue
				}
				t.Run(fmt.Sprintf("np%d_aggs%d_buf%d", np, naggs, buf), func(t *testing.T) {
					cases := make([]rankCase, np)
					for r := 0; r < np; r++ {
						// Split the first dimension unevenly.
						lo, hi := r*g[0]/np, (r+1)*g[0]/np
						sub := refmodel.Must(layout.Subarray(g, []int{hi - lo, g[1], g[2] - 1}, []int{lo, 0, 1}, layout.OrderC, layout.Int32))
						size := sub.Size()
						cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: sub, Size: size}, Data: refmodel.Fill(size, r)}
					}
					aggs := make([]int, naggs)
					for i := range aggs {
						aggs[i] = i * np / naggs
					}
					path := filepath.Join(t.TempDir(), "f")
					stats, err := runCollective(t, path, cases, aggs, buf, true, 0, func(j *ruledJob) { j.Overlap = buf == 7 })
					require.NoError(t, err)
					got, _ := os.ReadFile(path)
					require.Equal(t, refmodel.ExpectedFile(cases), got)
					require.Equal(t, naggs, stats[0].Aggregators)
				})
			}
		}
	}
}

// Random views, memory layouts, aggregators, buffer sizes and empty
// contributions: the file equals independent writes and reads return the data.
func TestRandomCollective(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		np := rapid.IntRange(1, 12).Draw(rt, "np")
		blk := int64(4 * rapid.IntRange(1, 5).Draw(rt, "blk"))
		// tile: the ranks' blocks follow each other without holes or
		// overlaps, and all ranks have as many (own blocks may apply).
		tile := rapid.Bool().Draw(rt, "tile")
		gap := int64(4 * rapid.IntRange(0, 3).Draw(rt, "gap"))
		// With extra > gap, each block runs into the next rank's: writes
		// overlap, and the higher rank's bytes must win.
		extra := int64(0)
		if np > 1 {
			extra = int64(4 * rapid.IntRange(0, int(blk/4)).Draw(rt, "extra"))
		}
		if tile {
			gap, extra = 0, 0
		}
		tileBlocks := int64(rapid.IntRange(1, 6).Draw(rt, "tile_blocks"))
		cases := make([]rankCase, np)
		for r := 0; r < np; r++ {
			// Rank r owns blocks r, r+np, ... of a block-cyclic 1-D file,
			// with a hole of gap bytes after each block.
			ft := refmodel.Must(layout.Resized(layout.Bytes(blk+extra), 0, int64(np)*(blk+gap)))
			nblocks := int64(rapid.IntRange(0, 6).Draw(rt, "nblocks")) // 0: empty contribution
			if tile {
				nblocks = tileBlocks
			}
			size := nblocks * (blk + extra)
			a := coll.Access{Filetype: ft, Disp: int64(r) * (blk + gap), Size: size}
			skip := blk // start one block into the view
			if tile {
				skip = 0
			}
			cases[r] = refmodel.Vary(rt, a, skip, r)
		}
		naggs := rapid.IntRange(1, np).Draw(rt, "naggs")
		if tile && rapid.Bool().Draw(rt, "all_aggregate") {
			naggs = np
		}
		aggs := rapid.Permutation(seq(np)).Draw(rt, "perm")[:naggs]
		bufSize := rapid.Int64Range(1, 200).Draw(rt, "cb")
		if tile && rapid.Bool().Draw(rt, "small_cb") {
			bufSize = rapid.Int64Range(1, 40).Draw(rt, "cb_small") // several rounds of own blocks
		}
		rmw := rapid.Bool().Draw(rt, "rmw")
		stripe := rapid.SampledFrom([]int64{0, 8, 64}).Draw(rt, "stripe")
		overlap := rapid.Bool().Draw(rt, "overlap")
		stripeCount := 0
		if stripe > 0 {
			stripeCount = rapid.IntRange(0, 5).Draw(rt, "stripe_count") // 0: generic domains
		}
		coRatio := rapid.IntRange(1, 3).Draw(rt, "co_ratio")
		affinity := rapid.SampledFrom([]int64{0, 4, 8, 32}).Draw(rt, "affinity_block") // used when <= cb and no stripe count
		atomic := rapid.Bool().Draw(rt, "atomic")
		// Own blocks at a random grid, from every rank's report.
		var own []coll.OwnBlocks
		ownGrid := rapid.SampledFrom([]int64{0, 4, 8, 12, 32}).Draw(rt, "own_grid")
		if ownGrid > 0 {
			for _, rc := range cases {
				own = append(own, CountOwnBlocks(rc.Access, ownGrid))
			}
		}
		var nodeOf []int // ranks on random nodes (affinity by node), or unknown
		if nodes := rapid.IntRange(0, 3).Draw(rt, "nodes"); nodes > 0 {
			nodeOf = make([]int, np)
			for r := range nodeOf {
				nodeOf[r] = rapid.IntRange(0, nodes-1).Draw(rt, "node")
			}
		}
		defer func(g int64) { maxGap = g }(maxGap)
		maxGap = rapid.SampledFrom([]int64{0, 4, 64 << 10}).Draw(rt, "max_gap")
		chunk := rapid.SampledFrom([]int64{3, 16, 0}).Draw(rt, "window_chunk") // 0: the default
		path := filepath.Join(t.TempDir(), "r")
		// What the file held before: holes keep it, and past its end
		// read-modify-write finds zeros without reading (coll.OldEnd).
		old := refmodel.Fill(rapid.Int64Range(0, 400).Draw(rt, "old_size"), 99)
		if err := os.WriteFile(path, old, 0o644); err != nil {
			rt.Fatal(err)
		}
		if _, err := runCollective(t, path, cases, aggs, bufSize, rmw, stripe, func(j *ruledJob) {
			j.Overlap, j.StripeCount, j.CoRatio, j.AffinityBlock = overlap, stripeCount, coRatio, affinity
			j.Atomic, j.NodeOf = atomic, nodeOf
			j.OwnGrid, j.Own = ownGrid, own
			j.WindowChunk = chunk
		}); err != nil {
			rt.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want := refmodel.ExpectedOver(old, cases)
		if !bytes.Equal(want, got) {
			rt.Fatalf("file differs: got %d bytes, want %d", len(got), len(want))
		}
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// All ranks contributing nothing is a no-op.
func TestAllEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e")
	cases := make([]rankCase, 3)
	for r := range cases {
		cases[r] = rankCase{Access: coll.Access{Filetype: layout.Byte}, Data: nil}
	}
	stats, err := runCollective(t, path, cases, []int{0}, 16, true, 0)
	require.NoError(t, err)
	require.Zero(t, stats[0].Rounds)
	got, _ := os.ReadFile(path)
	require.Empty(t, got)
}

// Many ranks: random interleaved block-cyclic views on up to 256
// in-memory ranks, some empty, random aggregator sets and buffer sizes.
func TestRandomManyRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("many ranks")
	}
	rapid.Check(t, func(rt *rapid.T) {
		np := rapid.SampledFrom([]int{17, 64, 256}).Draw(rt, "np")
		blk := int64(rapid.IntRange(1, 9).Draw(rt, "blk"))
		cases := make([]rankCase, np)
		for r := 0; r < np; r++ {
			ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, int64(np)*blk))
			size := int64(rapid.IntRange(0, 5).Draw(rt, "nblocks")) * blk
			a := coll.Access{Count: size, Filetype: ft, Disp: int64(r) * blk, Size: size}
			buf := refmodel.Fill(size, r)
			a.Buf = append([]byte(nil), buf...)
			cases[r] = rankCase{Access: a, Data: buf}
		}
		naggs := rapid.IntRange(1, min(np, 32)).Draw(rt, "naggs")
		aggs := rapid.Permutation(seq(np)).Draw(rt, "perm")[:naggs]
		// Few rounds: the cost of a round grows with the rank count.
		bufSize := rapid.Int64Range(blk*int64(np)/4+1, blk*int64(np)*2).Draw(rt, "cb")
		path := filepath.Join(t.TempDir(), "m")
		overlap := rapid.Bool().Draw(rt, "overlap")
		affinity := rapid.SampledFrom([]int64{0, blk, 4 * blk}).Draw(rt, "affinity_block")
		if _, err := runCollective(t, path, cases, aggs, bufSize, rapid.Bool().Draw(rt, "rmw"), 0, func(j *ruledJob) { j.Overlap, j.AffinityBlock = overlap, affinity }); err != nil {
			rt.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(refmodel.ExpectedFile(cases), got) {
			rt.Fatalf("file differs")
		}
	})
}

// Reading past end of file returns the bytes that exist, and zeros (not
// stale buffer contents) after them; the same count when the caller
// agrees on the end the aggregators' reads found (coll.EndOfFile), here
// with an Allreduce standing in for its agreement.
func TestReadPastEOF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eof")
	d := ufs.New()
	// Blocks of 8 bytes are read a chunk at a time and copied out, blocks
	// of 2 KiB with one vectored read per run (readRuns).
	for _, c := range []struct {
		gap, block int64
		agreed     bool
	}{{0, 8, false}, {64 << 10, 8, false}, {0, 8, true}, {64 << 10, 8, true}, {0, 2048, false}, {0, 2048, true}, {64 << 10, 2048, true}} {
		gap, b, agreed := c.gap, c.block, c.agreed
		maxGap = gap
		require.NoError(t, os.WriteFile(path, refmodel.Fill(20*b, 9), 0o644))
		bufs := make([]coll.Buffers, 2) // kept between the two reads, as a File keeps them
		err := comm.RunWorldTimeout(2, 0, 10*time.Second, func(c comm.Comm) error {
			f, err := d.Open(path, driver.OpenOptions{Flags: driver.ORdWr})
			if err != nil {
				return err
			}
			defer f.Close()
			// Rank r reads blocks r, r+2, ... of 20.
			ft := refmodel.Must(layout.Resized(layout.Bytes(b), 0, 2*b))
			buf := make([]byte, 10*b)
			read := func() (int64, error) {
				job := &coll.Job{Comm: c, File: f, Aggregators: []int{0}, Ranges: []coll.Range{{Start: 0, End: 19 * b}, {Start: b, End: 20 * b}}, BufSize: 1 << 20,
					Access: coll.Access{Buf: buf, Count: 10 * b, Filetype: ft, Disp: b * int64(c.Rank()), Size: 10 * b}, Buffers: &bufs[c.Rank()]}
				if !agreed {
					return Read(job, DomainRule{})
				}
				job.EOF = new(coll.EndOfFile)
				n, err := Read(job, DomainRule{})
				if err != nil {
					return n, err
				}
				if !job.EOF.Taken() || n != job.Access.Size {
					return n, fmt.Errorf("the end was not left to the caller: taken %v, %d bytes", job.EOF.Taken(), n)
				}
				end := []int64{0}
				if err := c.AllreduceInt64([]int64{int64(min(job.EOF.Word(), math.MaxInt64))}, end, comm.OpMin); err != nil {
					return 0, err
				}
				if end[0] == math.MaxInt64 {
					return n, nil
				}
				return job.Access.BytesBefore(end[0])
			}
			// The first read leaves data in the kept buffers; then the file
			// shrinks to 12.5 blocks.
			if n, err := read(); err != nil || n != 10*b {
				return fmt.Errorf("full read: %d, %v", n, err)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if c.Rank() == 0 {
				if err := f.Truncate(12*b + b/2); err != nil {
					return err
				}
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			n, err := read()
			if err != nil {
				return err
			}
			want := []int64{6*b + b/2, 6 * b}[c.Rank()] // rank 0's seventh block is cut by end of file
			if n != want {
				return fmt.Errorf("rank %d read %d bytes, want %d", c.Rank(), n, want)
			}
			for i := n; i < 10*b; i++ {
				if buf[i] != 0 {
					return fmt.Errorf("rank %d: byte %d past end of file is %#x, not 0", c.Rank(), i, buf[i])
				}
			}
			return nil
		})
		require.NoError(t, err, "maxGap %d, block %d, agreed %v", gap, b, agreed)
	}
	maxGap = 64 << 10
}

// The reference: where each data byte goes, from the layouts alone.
func fileOffsets(a coll.Access) []int64 { return refmodel.FileOffsets(refmodel.Of(a)) }
func memOffsets(a coll.Access) []int64  { return refmodel.MemOffsets(refmodel.Of(a)) }

// A call of one round has no next round to hide its file I/O behind: the
// I/O runs in the calling goroutine, all of it waited for, even with
// overlap on; a call of several rounds overlaps.
func TestOneRoundRunsItsIOInline(t *testing.T) {
	const np = 4
	g := []int{8, 8, 8}
	cases := make([]rankCase, np)
	for r := range np {
		lo, hi := r*g[0]/np, (r+1)*g[0]/np
		sub := refmodel.Must(layout.Subarray(g, []int{hi - lo, g[1], g[2]}, []int{lo, 0, 0}, layout.OrderC, layout.Int32))
		size := sub.Size()
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: sub, Size: size}, Data: refmodel.Fill(size, r)}
	}
	for _, buf := range []int64{1 << 20, 64} {
		stats, err := runCollective(t, filepath.Join(t.TempDir(), "f"), cases, []int{0, 2}, buf, false, 0, func(j *ruledJob) { j.Overlap = true })
		require.NoError(t, err)
		for r, s := range stats {
			if !s.Aggregator {
				continue
			}
			require.Equal(t, buf == 1<<20, s.Rounds == 1, "buf %d: rounds %d", buf, s.Rounds)
			require.Equal(t, s.Rounds == 1, s.IOWait == s.IO+s.RMW, "rank %d, %d rounds: I/O %v, waited %v", r, s.Rounds, s.IO+s.RMW, s.IOWait)
		}
	}
}
