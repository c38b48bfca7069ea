package twophase

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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

func TestAffinityBlockSize(t *testing.T) {
	const K = 1 << 10
	require.Equal(t, int64(64*K), AffinityBlockSize(coll.Range{Start: 0, End: 512 * K * K}, 4, 16*K*K, 0))       // 8192 blocks
	require.Equal(t, int64(128*K), AffinityBlockSize(coll.Range{Start: 0, End: 1024 * K * K}, 4, 16*K*K, 0))     // doubled to stay at 8192
	require.Equal(t, int64(96*K), AffinityBlockSize(coll.Range{Start: 0, End: 64 * K * K}, 4, 16*K*K, 96*K))     // a stripe
	require.Equal(t, int64(768*K), AffinityBlockSize(coll.Range{Start: 0, End: 4 * K * K * K}, 4, 16*K*K, 96*K)) // doubled stripes
	require.Zero(t, AffinityBlockSize(coll.Range{Start: 0, End: 512 * K * K}, 1, 16*K*K, 0), "one aggregator")
	require.Zero(t, AffinityBlockSize(coll.Range{Start: 0, End: 512 * K * K}, 4, 32*K, 0), "block above cb_buffer_size")
	require.Zero(t, AffinityBlockSize(coll.Range{Start: 0, End: 511 * K}, 4, 16*K*K, 0), "under two blocks per aggregator")
	require.Zero(t, AffinityBlockSize(coll.Range{Start: 5, End: 5}, 4, 16*K*K, 0))
}

func TestOwnerKey(t *testing.T) {
	require.Equal(t, -1, KeyOwner(0))
	require.Equal(t, -1, KeyOwner(OwnerKey(0, 3)))
	require.Equal(t, 7, KeyOwner(OwnerKey(1, 7)))
	// The maximum names the rank with most bytes, the lowest on ties.
	require.Equal(t, 2, KeyOwner(max(OwnerKey(10, 1), OwnerKey(11, 2), OwnerKey(3, 0))))
	require.Equal(t, 1, KeyOwner(max(OwnerKey(10, 1), OwnerKey(10, 2), OwnerKey(10, 5))))
	require.Equal(t, 1<<20-1, KeyOwner(OwnerKey(1<<40, 1<<20-1)))
}

// bruteBlocks cuts span into blocks byte by byte: consecutive bytes with
// the same off/block are one block.
func bruteBlocks(span coll.Range, block int64) []coll.Range {
	var out []coll.Range
	for x := span.Start; x < span.End; x++ {
		if n := len(out); n > 0 && (x-1)/block == x/block {
			out[n-1].End = x + 1
			continue
		}
		out = append(out, coll.Range{Start: x, End: x + 1})
	}
	return out
}

// bruteAffinity assigns blocks to aggregators by the rule as the strategy
// documents it, written out directly: in file order, a block with data
// goes to its owner's aggregator while that aggregator has kept fewer than
// ceil(1.5 * ceil(blocks with data / naggs)) blocks, else to the
// aggregator whose even share of the span (ROMIO's: ceil(len/naggs) bytes
// each, the last one to the end) holds the block's first byte.
func bruteAffinity(blocks []coll.Range, span coll.Range, owners, aggOf []int, naggs int) (doms [][]int32, kept int) {
	doms = make([][]int32, naggs)
	withData := 0
	for _, o := range owners {
		if o >= 0 {
			withData++
		}
	}
	fair := (withData + naggs - 1) / naggs
	quota := (3*fair + 1) / 2
	share := (span.Len() + int64(naggs) - 1) / int64(naggs)
	for i, o := range owners {
		if o < 0 {
			continue
		}
		if a := aggOf[o]; a >= 0 && len(doms[a]) < quota {
			doms[a] = append(doms[a], int32(i))
			kept++
			continue
		}
		a := min(int((blocks[i].Start-span.Start)/share), naggs-1)
		doms[a] = append(doms[a], int32(i))
	}
	return doms, kept
}

// bruteWindow is the file ranges of blocks, found byte by byte: maximal
// runs of consecutive bytes that belong to one of them.
func bruteWindow(blocks []coll.Range, pick []int32) []coll.Range {
	in := map[int64]bool{}
	lo, hi := int64(-1), int64(-1)
	for _, b := range pick {
		for x := blocks[b].Start; x < blocks[b].End; x++ {
			in[x] = true
			if lo < 0 || x < lo {
				lo = x
			}
			hi = max(hi, x+1)
		}
	}
	var out []coll.Range
	for x := lo; x < hi; x++ {
		if !in[x] {
			continue
		}
		if n := len(out); n > 0 && out[n-1].End == x {
			out[n-1].End = x + 1
			continue
		}
		out = append(out, coll.Range{Start: x, End: x + 1})
	}
	return out
}

// Blocks, affinity domains and their windows are what a brute-force
// assignment gives: blocks cut byte by byte, the assignment rule written
// out directly, windows found byte by byte.
func TestAffinityDomainsProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		block := rapid.Int64Range(1, 50).Draw(rt, "block")
		start := rapid.Int64Range(0, 200).Draw(rt, "start")
		span := coll.Range{Start: start, End: start + rapid.Int64Range(1, 2000).Draw(rt, "len")}
		blocks := bruteBlocks(span, block)
		nb := Blocks(span, block)
		if nb != len(blocks) {
			rt.Fatalf("Blocks says %d, there are %d", nb, len(blocks))
		}
		for i, want := range blocks {
			if got := BlockRange(span, block, i); got != want {
				rt.Fatalf("block %d is %v, want %v", i, got, want)
			}
		}

		np := rapid.IntRange(1, 9).Draw(rt, "np")
		naggs := rapid.IntRange(1, np).Draw(rt, "naggs")
		aggs := rapid.Permutation(seq(np)).Draw(rt, "aggs")[:naggs]
		aggOf := make([]int, np)
		for r := range aggOf {
			aggOf[r] = -1
		}
		for i, a := range aggs {
			aggOf[a] = i
		}
		owners := make([]int, nb)
		for i := range owners {
			owners[i] = rapid.IntRange(-1, np-1).Draw(rt, "owner")
		}
		doms, c := AffinityDomains(span, block, owners, aggOf, naggs)
		want, kept := bruteAffinity(blocks, span, owners, aggOf, naggs)
		for a := range naggs {
			if !slices.Equal(doms[a], want[a]) {
				rt.Fatalf("aggregator %d gets blocks %v, brute force %v (all: %v vs %v)", a, doms[a], want[a], doms, want)
			}
		}
		withData := 0
		for _, o := range owners {
			if o >= 0 {
				withData++
			}
		}
		if c != (BlockCount{WithData: withData, Kept: kept}) {
			rt.Fatalf("count %+v, brute force %d with data, %d kept", c, withData, kept)
		}

		perRound := rapid.IntRange(1, 4).Draw(rt, "per_round")
		rounds, wantRounds := AffinityRounds(doms, perRound), 0
		for _, d := range doms {
			wantRounds = max(wantRounds, (len(d)+perRound-1)/perRound)
		}
		if rounds != wantRounds {
			rt.Fatalf("%d rounds of %d blocks for domains %v, brute force %d", rounds, perRound, doms, wantRounds)
		}
		for a, d := range doms {
			for m := range rounds {
				lo, hi := min(m*perRound, len(d)), min((m+1)*perRound, len(d))
				got := AffinityWindow(nil, span, block, d, m, perRound)
				if wantW := bruteWindow(blocks, d[lo:hi]); !slices.Equal(got, wantW) {
					rt.Fatalf("round %d of domain %d (blocks %v): window %v, brute force %v", m, a, d[lo:hi], got, wantW)
				}
			}
		}
	})
}

func total(rs []coll.Range) (n int64) {
	for _, r := range rs {
		n += r.Len()
	}
	return n
}

// collperf2x2 is coll_perf's layout of a 16^3 int32 array on a 2x2x1
// process grid: each rank owns runs of 512 bytes, aligned to 512.
func collperf2x2() []rankCase {
	g := []int{16, 16, 16}
	cases := make([]rankCase, 4)
	for r := range cases {
		sub := refmodel.Must(layout.Subarray(g, []int{8, 8, 16}, []int{8 * (r / 2), 8 * (r % 2), 0}, layout.OrderC, layout.Int32))
		size := sub.Size()
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: sub, Size: size}, Data: refmodel.Fill(size, r)}
	}
	return cases
}

// collperf's layout on a 2x2 process grid: every rank owns whole runs, so
// with affinity domains no data crosses ranks (only the request lists),
// while ROMIO's even domains move half of it; the files are the same.
func TestAffinityKeepsOwnedRuns(t *testing.T) {
	cases := collperf2x2()
	aggs := []int{0, 1, 2, 3}
	sent := map[int64]int64{}
	for _, block := range []int64{0, 512} {
		path := filepath.Join(t.TempDir(), "f")
		stats, err := runCollective(t, path, cases, aggs, 4096, true, 0, func(j *ruledJob) { j.AffinityBlock = block })
		require.NoError(t, err)
		got, _ := os.ReadFile(path)
		require.Equal(t, refmodel.ExpectedFile(cases), got)
		for _, s := range stats {
			sent[block] += s.BytesSent
		}
		if block > 0 {
			require.Equal(t, "affinity: 32 of 32 blocks of 512 B at their main rank, no exchange", stats[0].Domains)
		}
	}
	// Even domains: half of 16 KiB crosses each way (write and read).
	require.Greater(t, sent[0], int64(16<<10))
	require.Zero(t, sent[512], "nothing crosses ranks")
}

// One rank writing a few bytes into another's block: the blocks stay with
// their main writers, but the rounds exchange again, and the stray bytes
// reach the file.
func TestAffinityStrayBytes(t *testing.T) {
	const blk = 256
	cases := make([]rankCase, 3)
	for r := range cases {
		// Rank r writes block r whole; rank 2 also the first 8 bytes of
		// block 3 and rank 0 the rest of it.
		ft := refmodel.Must(layout.Indexed([]int{blk}, []int{r * blk}, layout.Byte))
		size := int64(blk)
		switch r {
		case 0:
			ft = refmodel.Must(layout.Indexed([]int{blk, blk - 8}, []int{0, 3*blk + 8}, layout.Byte))
			size = 2*blk - 8
		case 2:
			ft = refmodel.Must(layout.Indexed([]int{blk, 8}, []int{2 * blk, 3 * blk}, layout.Byte))
			size = blk + 8
		}
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: ft, Size: size}, Data: refmodel.Fill(size, r)}
	}
	path := filepath.Join(t.TempDir(), "f")
	stats, err := runCollective(t, path, cases, []int{0, 1, 2}, 1024, true, 0, func(j *ruledJob) { j.AffinityBlock = blk })
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(cases), got)
	require.Equal(t, "affinity: 4 of 4 blocks of 256 B at their main rank, 8 of 1024 bytes cross ranks", stats[0].Domains)
	require.Positive(t, stats[2].BytesSent)

	// A caller that undercounts the bytes by the stray 8 would make the
	// call skip the exchange: rank 2 reports it instead of dropping them.
	_, err = runCollective(t, path, cases, []int{0, 1, 2}, 1024, true, 0, func(j *ruledJob) { j.AffinityBlock, j.TotalBytes = blk, 1016 })
	require.ErrorContains(t, err, "rank 2 has 8 bytes in block 3 of another aggregator")
}

// Records round-robin: every block is shared alike, so affinity would move
// most of the data, and ROMIO's domains are kept.
func TestAffinityDeclined(t *testing.T) {
	const np, rec = 4, 8
	cases := make([]rankCase, np)
	for r := range cases {
		ft := refmodel.Must(layout.Resized(layout.Bytes(rec), 0, np*rec))
		size := int64(64 * rec)
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: ft, Disp: int64(r * rec), Size: size}, Data: refmodel.Fill(size, r)}
	}
	path := filepath.Join(t.TempDir(), "f")
	stats, err := runCollective(t, path, cases, seq(np), 1024, true, 0, func(j *ruledJob) { j.AffinityBlock = 128 })
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(cases), got)
	require.Regexp(t, `^even \(affinity would move \d+ of the 2048 bytes\)$`, stats[0].Domains)
}

// Rank 0 writes most of six blocks of eight: affinity domains would keep
// 504 of 512 bytes home, but give rank 0 three rounds of two blocks where
// even domains take two, so even domains are kept.
func TestAffinityMoreRoundsDeclined(t *testing.T) {
	const blk = 64
	cases := make([]rankCase, 2)
	for r := range cases {
		// Rank 1 writes the first 8 bytes of block 0 and blocks 6 and 7;
		// rank 0 the rest of blocks 0 to 5.
		ft := refmodel.Must(layout.Indexed([]int{6*blk - 8}, []int{8}, layout.Byte))
		size := int64(6*blk - 8)
		if r == 1 {
			ft = refmodel.Must(layout.Indexed([]int{8, 2 * blk}, []int{0, 6 * blk}, layout.Byte))
			size = 2*blk + 8
		}
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: ft, Size: size}, Data: refmodel.Fill(size, r)}
	}
	path := filepath.Join(t.TempDir(), "f")
	stats, err := runCollective(t, path, cases, []int{0, 1}, 2*blk, true, 0, func(j *ruledJob) { j.AffinityBlock = blk })
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	require.Equal(t, refmodel.ExpectedFile(cases), got)
	require.Equal(t, "even (affinity would take 3 rounds, not 2)", stats[0].Domains)
	require.Equal(t, 2, stats[0].Rounds)
}

// A write's file time is recorded on the aggregators that wrote, with
// either kind of domains.
func TestWriteRecordsIO(t *testing.T) {
	for _, block := range []int64{0, 64} {
		n := 3
		stats := make([]metrics.Call, n)
		dir := t.TempDir()
		err := comm.RunWorldTimeout(n, 0, 60*time.Second, func(c comm.Comm) error {
			f, err := ufs.New().Open(filepath.Join(dir, "f"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
			if err != nil {
				return err
			}
			defer f.Close()
			// Rank r writes bytes [r*256, (r+1)*256).
			ranges := []coll.Range{{Start: 0, End: 256}, {Start: 256, End: 512}, {Start: 512, End: 768}}
			r := c.Rank()
			ft := refmodel.Must(layout.Indexed([]int{256}, []int{256 * r}, layout.Byte))
			return Write(&coll.Job{Comm: c, File: f, Aggregators: []int{0, 1, 2}, Ranges: ranges, BufSize: 1024, TotalBytes: 768,
				Access: coll.Access{Buf: refmodel.Fill(256, r), Count: 256, Filetype: ft, Size: 256}, Stats: &stats[r]}, DomainRule{AffinityBlock: block})
		})
		require.NoError(t, err)
		for r, s := range stats {
			require.Positive(t, s.IO, "rank %d, affinity block %d", r, block)
		}
	}
}

// Counting a rank's bytes per block by walking its pieces, by the data
// before each block boundary, or giving up part way, gives the keys of a
// byte-by-byte count.
func TestBlockBytesBothWays(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		np := rapid.IntRange(1, 5).Draw(rt, "np")
		r := rapid.IntRange(0, np-1).Draw(rt, "rank")
		blk := rapid.Int64Range(1, 40).Draw(rt, "blk")
		gap := rapid.Int64Range(0, 30).Draw(rt, "gap")
		ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, int64(np)*(blk+gap)))
		nblocks := rapid.Int64Range(1, 30).Draw(rt, "nblocks")
		skip := rapid.Int64Range(0, blk*nblocks-1).Draw(rt, "skip")
		a := coll.Access{Count: nblocks*blk - skip, Filetype: ft, Disp: int64(r) * (blk + gap), DataStart: skip, Size: nblocks*blk - skip}
		j := &coll.Job{Access: a, Ranges: make([]coll.Range, np)}
		offs := fileOffsets(a)
		j.Ranges[r] = coll.Range{Start: offs[0], End: offs[len(offs)-1] + 1}
		span := coll.Range{Start: rapid.Int64Range(0, j.Ranges[r].Start).Draw(rt, "span_start"), End: j.Ranges[r].End + rapid.Int64Range(0, 50).Draw(rt, "span_more")}
		block := rapid.Int64Range(1, 64).Draw(rt, "block")
		count := func(budget int) []int64 {
			defer func(f func(int) int) { pieceBudget = f }(pieceBudget)
			pieceBudget = func(int) int { return budget }
			keys := make([]int64, Blocks(span, block))
			if err := blockBytes(coll.NewSlicer(j.Access), j, span, block, keys, r); err != nil {
				rt.Fatal(err)
			}
			return keys
		}
		// Brute force: every data byte's file offset (refmodel), counted in
		// the block it falls in.
		brute := make([]int64, Blocks(span, block))
		for _, off := range offs {
			brute[off/block-span.Start/block]++
		}
		for i, n := range brute {
			brute[i] = OwnerKey(n, r)
		}
		require.Equal(rt, brute, count(1<<30), "walking the pieces")
		require.Equal(rt, brute, count(0), "by the data before each block boundary")
		require.Equal(rt, brute, count(rapid.IntRange(1, 5).Draw(rt, "budget")), "giving up part way")
	})
}

// Reads that skip the exchange count the bytes before end of file on each
// aggregator, and zero the rest.
func TestAffinityReadPastEOF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "eof")
	require.NoError(t, os.WriteFile(path, refmodel.Fill(100, 9), 0o644))
	err := comm.RunWorldTimeout(2, 0, 10*time.Second, func(c comm.Comm) error {
		f, err := ufs.New().Open(path, driver.OpenOptions{Flags: driver.ORdWr})
		if err != nil {
			return err
		}
		defer f.Close()
		r := c.Rank()
		buf := make([]byte, 80)
		for i := range buf {
			buf[i] = 0xee
		}
		var st metrics.Call
		// Rank r reads bytes [80r, 80r+80) of a 100-byte file.
		n, err := Read(&coll.Job{Comm: c, File: f, Aggregators: []int{0, 1}, Ranges: []coll.Range{{Start: 0, End: 80}, {Start: 80, End: 160}}, BufSize: 64,
			TotalBytes: 160, Stats: &st,
			Access: coll.Access{Buf: buf, Count: 80, Filetype: layout.Byte, Disp: int64(80 * r), Size: 80}}, DomainRule{AffinityBlock: 16})
		if err != nil {
			return err
		}
		if want := []int64{80, 20}[r]; n != want {
			return fmt.Errorf("rank %d read %d bytes, want %d", r, n, want)
		}
		if !strings.HasSuffix(st.Domains, "no exchange") {
			return fmt.Errorf("domains %q", st.Domains)
		}
		file := refmodel.Fill(100, 9)
		for i := range buf {
			want := byte(0)
			if at := 80*r + i; at < 100 {
				want = file[at]
			}
			if buf[i] != want {
				return fmt.Errorf("rank %d: byte %d is %#x, want %#x", r, i, buf[i], want)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// nodeSpy counts the bytes an Alltoallv sends to ranks on other nodes.
type nodeSpy struct {
	comm.Comm
	nodeOf []int
	cross  *atomic.Int64
}

func (s nodeSpy) Alltoallv(send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	for p, n := range scounts {
		if s.nodeOf[p] != s.nodeOf[s.Rank()] {
			s.cross.Add(int64(n))
		}
	}
	return s.Comm.Alltoallv(send, scounts, sdispls, recv, rcounts, rdispls)
}

// coll_perf's 2x2 layout on two nodes of two ranks each, one aggregator
// per node, with the nodes interleaved so that ROMIO's domains send half
// of the data across: with affinity by node, the blocks of the rank that
// does not aggregate go to its node's aggregator and nothing crosses.
func TestAffinityByNode(t *testing.T) {
	cases := collperf2x2()
	nodeOf := []int{0, 1, 0, 1}
	cross := map[int64]int64{}
	for _, block := range []int64{0, 512} {
		var n atomic.Int64
		path := filepath.Join(t.TempDir(), "f")
		stats, err := runCollective(t, path, cases, []int{0, 1}, 4096, true, 0, func(j *ruledJob) {
			j.AffinityBlock, j.NodeOf = block, nodeOf
			j.Comm = nodeSpy{j.Comm, nodeOf, &n}
		})
		require.NoError(t, err)
		got, _ := os.ReadFile(path)
		require.Equal(t, refmodel.ExpectedFile(cases), got)
		cross[block] = n.Load()
		if block > 0 {
			require.Equal(t, "affinity by node: 32 of 32 blocks of 512 B at an aggregator on their main rank's node; of 16384 bytes 8192 stay at their rank, 8192 more on its node", stats[0].Domains)
		}
	}
	require.Positive(t, cross[0], "ROMIO's domains send data across nodes")
	require.Zero(t, cross[512], "affinity by node sends nothing across")
}

// A rank that cannot count its bytes per block (a view whose blocks are
// not in file order) fails the plan on every rank: none waits in rounds
// the others never start.
func TestAffinityCountErrorReachesAll(t *testing.T) {
	defer func(f func(int) int) { pieceBudget = f }(pieceBudget)
	pieceBudget = func(int) int { return 0 } // count by block boundaries, which checks the order
	dir := t.TempDir()
	errs := make([]error, 2)
	err := comm.RunWorldTimeout(2, 0, 10*time.Second, func(c comm.Comm) error {
		f, err := ufs.New().Open(filepath.Join(dir, "f"), driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate})
		if err != nil {
			return err
		}
		defer f.Close()
		r := c.Rank()
		ft := refmodel.Must(layout.Indexed([]int{4096}, []int{0}, layout.Byte))
		if r == 1 {
			ft = refmodel.Must(layout.Indexed([]int{2048, 2048}, []int{6144, 4096}, layout.Byte)) // backwards
		}
		errs[r] = Write(&coll.Job{Comm: c, File: f, Aggregators: []int{0, 1}, Ranges: []coll.Range{{Start: 0, End: 4096}, {Start: 4096, End: 8192}},
			BufSize: 8192, TotalBytes: 8192,
			Access: coll.Access{Buf: make([]byte, 4096), Count: 4096, Filetype: ft, Size: 4096}}, DomainRule{AffinityBlock: 1024})
		return nil
	})
	require.NoError(t, err, "no rank hangs")
	require.ErrorContains(t, errs[0], "another rank could not count")
	require.ErrorContains(t, errs[1], "not ordered")
}

func TestBlockTargets(t *testing.T) {
	// 6 ranks on nodes 0,0,0,1,1,1; aggregators ranks 0 and 3 (indices 0, 1).
	aggs := []int{0, 3}
	aggOf := aggIndex(aggs, 6)
	target, byNode := BlockTargets(aggOf, aggs, []int{0, 0, 0, 1, 1, 1})
	require.True(t, byNode)
	require.Equal(t, []int{0, 0, 0, 1, 1, 1}, target)
	target, byNode = BlockTargets(aggOf, aggs, nil)
	require.False(t, byNode)
	require.Equal(t, []int{0, -1, -1, 1, -1, -1}, target)
}

func TestPlanAffinityFallsBackWhenMostBytesMove(t *testing.T) {
	span := coll.Range{Start: 0, End: 4 << 10}
	// Four 1 KiB blocks, owned by ranks 0, 1, 2, 3 with all their bytes;
	// aggregators 0 and 2 on a node each, ranks 1 and 3 on no node known.
	keys := []int64{OwnerKey(1024, 0), OwnerKey(1024, 1), OwnerKey(1024, 2), OwnerKey(1024, 3)}
	p, ok := PlanAffinity(span, 1024, keys, []int{0, 2}, nil, 4, 4096)
	require.True(t, ok) // half stays: 0's and 2's blocks
	require.Equal(t, int64(2048), p.Home)
	require.Equal(t, int64(2048), p.Moved)
	_, ok = PlanAffinity(span, 1024, keys, []int{0, 2}, nil, 4, 4097)
	require.False(t, ok)
	// With nodes, ranks 1 and 3 have an aggregator on theirs: all kept.
	p, ok = PlanAffinity(span, 1024, keys, []int{0, 2}, []int{0, 0, 1, 1}, 4, 4096)
	require.True(t, ok)
	require.True(t, p.ByNode)
	require.Equal(t, int64(4096), p.Kept)
	require.Zero(t, p.Moved)
	require.Equal(t, [][]int32{{0, 1}, {2, 3}}, p.Doms)
}
