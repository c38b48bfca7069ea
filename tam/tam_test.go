package tam

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
	"github.com/collio/collio/topo"
	"github.com/collio/collio/twophase"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// rankCase is one rank's access and its buffer.
type rankCase = refmodel.Case

// setup describes one collective run.
type setup struct {
	cases       []rankCase
	aggs        []int
	buf         int64
	rmw         bool
	stripe      int64
	stripeCount int
	coRatio     int
	overlap     bool
	nodeSize    int    // ranks per virtual node
	perNode     int    // local aggregators per node (<= 0: default)
	old         []byte // what the file holds before the write
	chunk       int64  // Job.WindowChunk (0: the default)
	noSplit     bool   // TAM's Job.Comm refuses to make communicators
}

// runTAM writes every rank's access with tam.Write on an in-memory world,
// reads it back with tam.Read and checks the data; it returns the file.
func runTAM(s setup) ([]byte, []metrics.Call, []Report, error) {
	n := len(s.cases)
	f := &memFile{b: slices.Clone(s.old)}
	stats := make([]metrics.Call, n)
	reps := make([]Report, n)
	rg := refmodel.Ranges(s.cases)
	nodes := topo.Virtual(n, s.nodeSize)
	err := comm.RunWorldTimeout(n, s.nodeSize, 60*time.Second, func(c comm.Comm) error {
		r := c.Rank()
		cfg := s.config(nodes)
		cfg.Report = &reps[r]
		a := s.cases[r].Access
		a.Buf = append([]byte(nil), s.cases[r].Data...)
		jc := c
		if s.noSplit {
			jc = noSplitComm{c}
		}
		j := s.job(jc, f, rg, a, &stats[r])
		if err := Write(j, cfg); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		back := a
		back.Buf = make([]byte, len(a.Buf))
		j.Access = back
		got, err := Read(j, cfg)
		if err != nil {
			return err
		}
		if got != back.Size {
			return fmt.Errorf("read %d bytes, want %d", got, back.Size)
		}
		return checkBack(back, s.cases[r].Data)
	})
	return f.bytes(), stats, reps, err
}

func checkBack(back coll.Access, want []byte) error {
	for _, m := range memOffsets(back) {
		if back.Buf[m] != want[m] {
			return fmt.Errorf("read back differs at buffer offset %d: %d, want %d", m, back.Buf[m], want[m])
		}
	}
	return nil
}

// runTwoPhase writes the same accesses with twophase.Write.
func runTwoPhase(s setup) ([]byte, error) {
	n := len(s.cases)
	f := &memFile{b: slices.Clone(s.old)}
	rg := refmodel.Ranges(s.cases)
	err := comm.RunWorldTimeout(n, s.nodeSize, 60*time.Second, func(c comm.Comm) error {
		a := s.cases[c.Rank()].Access
		a.Buf = append([]byte(nil), s.cases[c.Rank()].Data...)
		return twophase.Write(s.job(c, f, rg, a, nil), s.rule())
	})
	return f.bytes(), err
}

func (s setup) job(c comm.Comm, f driver.File, rg []coll.Range, a coll.Access, st *metrics.Call) *coll.Job {
	return &coll.Job{Comm: c, File: f, Aggregators: s.aggs, Ranges: rg, Access: a,
		BufSize: s.buf, RMW: s.rmw, Overlap: s.overlap, WindowChunk: s.chunk, Stats: st}
}

// rule is the global layer's domains, as two-phase's.
func (s setup) rule() twophase.DomainRule {
	return twophase.DomainRule{Stripe: s.stripe, StripeCount: s.stripeCount, CoRatio: s.coRatio}
}

// config is TAM's configuration for s on nodes.
func (s setup) config(nodes topo.Nodes) Config {
	cfg := NewConfig(nodes, s.perNode)
	cfg.Global = s.rule()
	return cfg
}

// check runs s through TAM and two-phase and compares both files with
// independent writes.
func check(s setup) error {
	want := refmodel.ExpectedOver(s.old, s.cases)
	got, _, _, err := runTAM(s)
	if err != nil {
		return fmt.Errorf("tam: %w", err)
	}
	if !bytes.Equal(want, got) {
		return fmt.Errorf("tam file differs from independent writes: %s", diff(got, want))
	}
	tp, err := runTwoPhase(s)
	if err != nil {
		return fmt.Errorf("twophase: %w", err)
	}
	if !bytes.Equal(tp, got) {
		return fmt.Errorf("tam file differs from twophase's: %s", diff(got, tp))
	}
	return nil
}

func diff(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: %d, want %d", i, got[i], want[i])
		}
	}
	return "equal"
}

// subarrayCases is a coll_perf-like 3-D block distribution: the first
// dimension split unevenly, one column left out (holes).
func subarrayCases(np int) []rankCase {
	g := []int{9, 7, 5}
	cases := make([]rankCase, np)
	for r := 0; r < np; r++ {
		lo, hi := r*g[0]/np, (r+1)*g[0]/np
		sub := refmodel.Must(layout.Subarray(g, []int{hi - lo, g[1], g[2] - 1}, []int{lo, 0, 1}, layout.OrderC, layout.Int32))
		size := sub.Size()
		cases[r] = rankCase{Access: coll.Access{Count: size, Filetype: sub, Size: size}, Data: refmodel.Fill(size, r)}
	}
	return cases
}

func spreadAggs(np, naggs int) []int {
	aggs := make([]int, naggs)
	for i := range aggs {
		aggs[i] = i * np / naggs
	}
	return aggs
}

// A call makes no communicator: MPI_Comm_split is collective, a step per
// call across nodes before any data moves.
func TestNoCommunicatorPerCall(t *testing.T) {
	s := setup{cases: subarrayCases(6), aggs: spreadAggs(6, 2), buf: 64, nodeSize: 3, perNode: 1, noSplit: true}
	require.NoError(t, check(s))
}

// noSplitComm fails every call that would make a communicator.
type noSplitComm struct{ comm.Comm }

func (noSplitComm) Split(int, int) (comm.Comm, error) {
	return nil, errors.New("Split in a collective call")
}
func (noSplitComm) SplitNode() (comm.Comm, error) {
	return nil, errors.New("SplitNode in a collective call")
}
func (noSplitComm) Dup() (comm.Comm, error) { return nil, errors.New("Dup in a collective call") }

func TestSubarrayBlocks(t *testing.T) {
	for _, np := range []int{1, 3, 4, 6} {
		for _, nodes := range []int{1, 2} {
			for _, naggs := range []int{1, 2, np} {
				for _, buf := range []int64{7, 64, 1 << 20} {
					if naggs > np || nodes > np {
						continue
					}
					name := fmt.Sprintf("np%d_nodes%d_aggs%d_buf%d", np, nodes, naggs, buf)
					t.Run(name, func(t *testing.T) {
						s := setup{cases: subarrayCases(np), aggs: spreadAggs(np, naggs), buf: buf, rmw: true,
							nodeSize: (np + nodes - 1) / nodes, perNode: 1 + np%2, overlap: buf == 7}
						require.NoError(t, check(s))
					})
				}
			}
		}
	}
}

// Random block-cyclic views, memory layouts, node and local-aggregator
// counts, aggregators, buffer sizes, stripe-cyclic domains and empty
// contributions: TAM's file equals independent writes and twophase's,
// and reads give the data back.
func TestRandomCollective(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := randomSetup(rt, 12)
		if err := check(s); err != nil {
			rt.Fatal(err)
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

func randomSetup(rt *rapid.T, maxNP int) setup {
	np := rapid.IntRange(1, maxNP).Draw(rt, "np")
	blk := int64(4 * rapid.IntRange(1, 5).Draw(rt, "blk"))
	gap := int64(4 * rapid.IntRange(0, 3).Draw(rt, "gap"))
	cases := make([]rankCase, np)
	for r := 0; r < np; r++ {
		// Rank r owns blocks r, r+np, ... of a block-cyclic 1-D file, with
		// a hole of gap bytes after each block.
		ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, int64(np)*(blk+gap)))
		nblocks := int64(rapid.IntRange(0, 6).Draw(rt, "nblocks")) // 0: empty contribution
		size := nblocks * blk
		a := coll.Access{Filetype: ft, Disp: int64(r) * (blk + gap), Size: size}
		cases[r] = refmodel.Vary(rt, a, blk, r) // skip: start one block into the view
	}
	naggs := rapid.IntRange(1, np).Draw(rt, "naggs")
	s := setup{
		cases:    cases,
		aggs:     rapid.Permutation(seq(np)).Draw(rt, "perm")[:naggs],
		buf:      rapid.Int64Range(1, 200).Draw(rt, "cb"),
		rmw:      rapid.Bool().Draw(rt, "rmw"),
		stripe:   rapid.SampledFrom([]int64{0, 8, 64}).Draw(rt, "stripe"),
		overlap:  rapid.Bool().Draw(rt, "overlap"),
		nodeSize: rapid.IntRange(1, np).Draw(rt, "node_size"),
		perNode:  rapid.IntRange(0, 4).Draw(rt, "per_node"), // 0: TAM's default
		coRatio:  rapid.IntRange(1, 3).Draw(rt, "co_ratio"),
		// Holes keep what the file held; past its end read-modify-write
		// finds zeros without reading (coll.OldEnd).
		old:   refmodel.Fill(rapid.Int64Range(0, 400).Draw(rt, "old_size"), 99),
		chunk: rapid.SampledFrom([]int64{3, 16, 0}).Draw(rt, "window_chunk"),
	}
	if s.stripe > 0 {
		s.stripeCount = rapid.IntRange(0, 5).Draw(rt, "stripe_count") // 0: generic domains
	}
	return s
}

// Overlapping views: every rank writes blk bytes at r*blk/2, so each
// byte is written by two ranks; the higher rank wins, as in twophase, for
// groups of consecutive ranks.
func TestOverlappingWrites(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		np := rapid.IntRange(2, 10).Draw(rt, "np")
		blk := int64(2 * rapid.IntRange(1, 8).Draw(rt, "half"))
		cases := make([]rankCase, np)
		for r := range cases {
			ft := layout.Bytes(blk)
			cases[r] = rankCase{Access: coll.Access{Count: blk, Filetype: ft, Disp: int64(r) * blk / 2, Size: blk}, Data: refmodel.Fill(blk, r)}
		}
		naggs := rapid.IntRange(1, np).Draw(rt, "naggs")
		s := setup{cases: cases, aggs: spreadAggs(np, naggs), buf: rapid.Int64Range(1, 64).Draw(rt, "cb"),
			rmw: rapid.Bool().Draw(rt, "rmw"), nodeSize: rapid.IntRange(1, np).Draw(rt, "node_size"),
			perNode: rapid.IntRange(1, 3).Draw(rt, "per_node")}
		want := refmodel.ExpectedFile(cases)
		f := &memFile{}
		rg := refmodel.Ranges(cases)
		nodes := topo.Virtual(np, s.nodeSize)
		err := comm.RunWorld(np, s.nodeSize, func(c comm.Comm) error {
			a := cases[c.Rank()].Access
			a.Buf = append([]byte(nil), cases[c.Rank()].Data...)
			return Write(s.job(c, f, rg, a, nil), s.config(nodes))
		})
		if err != nil {
			rt.Fatal(err)
		}
		if got := f.bytes(); !bytes.Equal(got, want) {
			rt.Fatalf("file differs: %s", diff(got, want))
		}
		tp, err := runTwoPhase(s)
		if err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(tp, want) {
			rt.Fatalf("twophase file differs: %s", diff(tp, want))
		}
	})
}

// Many in-memory ranks on many virtual nodes, few rounds; the global
// aggregators hear only from local aggregators.
func TestManyRanks(t *testing.T) {
	for _, c := range []struct{ np, nodes, perNode, naggs int }{
		{1024, 16, 4, 16},
		{512, 64, 0, 8}, // default: ceil(512/64) = 8 per node, every rank
	} {
		t.Run(fmt.Sprintf("np%d_nodes%d", c.np, c.nodes), func(t *testing.T) {
			const blk = 8
			cases := make([]rankCase, c.np)
			for r := range cases {
				ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, int64(c.np)*blk))
				size := int64(3+r%3) * blk
				if r%7 == 3 {
					size = 0
				}
				cases[r] = rankCase{Access: coll.Access{Count: size, Filetype: ft, Disp: int64(r) * blk, Size: size}, Data: refmodel.Fill(size, r)}
			}
			s := setup{cases: cases, aggs: topoAggs(c.np, c.nodes, c.naggs), buf: int64(c.np) * blk * 5 / int64(c.naggs) / 2,
				nodeSize: c.np / c.nodes, perNode: c.perNode, rmw: true}
			start := time.Now()
			got, stats, reps, err := runTAM(s)
			require.NoError(t, err)
			require.Equal(t, refmodel.ExpectedFile(cases), got)
			t.Logf("%d ranks: write+read %v, %d rounds", c.np, time.Since(start), stats[0].Rounds)
			tp, err := runTwoPhase(s)
			require.NoError(t, err)
			require.Equal(t, tp, got)
			locals := len(NewConfig(topo.Virtual(c.np, s.nodeSize), c.perNode).Local.Aggs)
			for _, a := range s.aggs {
				// Two messages (header, extents) per local aggregator per
				// round on each of write and read.
				require.LessOrEqual(t, reps[a].Layer2Recv, int64(2*2*locals*stats[a].Rounds))
			}
			var pieces, extents int64
			for _, rp := range reps {
				pieces += rp.Pieces
				extents += rp.Extents
			}
			if locals < c.np {
				require.Less(t, extents, pieces)
			} else { // every rank its own local aggregator: two-phase
				require.Equal(t, extents, pieces)
			}
		})
	}
}

// topoAggs is ROMIO's default placement: naggs aggregators spread over
// the nodes.
func topoAggs(np, nodes, naggs int) []int {
	aggs, _ := topo.Aggregators(topo.Virtual(np, np/nodes), naggs, nil)
	return aggs
}

// A global aggregator whose file fails reports the error; everyone else
// finishes, nobody hangs, on writes and reads.
func TestFileErrorsDoNotHang(t *testing.T) {
	np := 8
	cases := subarrayCases(np)
	rg := refmodel.Ranges(cases)
	nodes := topo.Virtual(np, 4)
	good := &memFile{}
	bad := &memFile{failWrites: true, failReads: true}
	aggs := []int{1, 6}
	errs := make([]error, np)
	err := comm.RunWorldTimeout(np, 4, 20*time.Second, func(c comm.Comm) error {
		r := c.Rank()
		var f driver.File = good
		if r == 6 {
			f = bad
		}
		a := cases[r].Access
		a.Buf = append([]byte(nil), cases[r].Data...)
		j := (setup{aggs: aggs, buf: 50}).job(c, f, rg, a, nil)
		cfg := NewConfig(nodes, 2)
		werr := Write(j, cfg)
		if err := c.Barrier(); err != nil {
			return err
		}
		_, rerr := Read(j, cfg)
		errs[r] = errors.Join(werr, rerr)
		return nil
	})
	require.NoError(t, err)
	for r, e := range errs {
		if r == 6 {
			require.ErrorIs(t, e, errInjected)
		} else {
			require.NoError(t, e, "rank %d", r)
		}
	}
}

// Invalid configurations fail the same way on every rank, without
// communicating.
func TestConfigErrors(t *testing.T) {
	np := 4
	cases := subarrayCases(np)
	rg := refmodel.Ranges(cases)
	nodes := topo.Virtual(np, 2)
	bad := []Config{
		{Nodes: topo.Virtual(3, 1)},
		{Nodes: nodes, Local: topo.Local{Bind: []int{0, 0, 0, 0}}}, // rank 2 bound across nodes
		{Nodes: nodes, Local: topo.Local{Bind: []int{1, 1, 2, 2}}}, // fine
		{Nodes: nodes, Local: topo.Local{Bind: []int{1, 0, 2, 2}}}, // 1 -> 0 -> 1
	}
	for k, cfg := range bad {
		err := comm.RunWorldTimeout(np, 2, 10*time.Second, func(c comm.Comm) error {
			a := cases[c.Rank()].Access
			a.Buf = append([]byte(nil), cases[c.Rank()].Data...)
			return Write((setup{aggs: []int{0}, buf: 64}).job(c, &memFile{}, rg, a, nil), cfg)
		})
		if k == 2 {
			require.NoError(t, err)
		} else {
			require.Error(t, err, "config %d", k)
		}
	}
}

// All ranks accessing nothing is a no-op; Atomic goes through twophase.
func TestEmptyAndAtomic(t *testing.T) {
	np := 3
	empty := make([]rankCase, np)
	for r := range empty {
		empty[r] = rankCase{Access: coll.Access{Filetype: layout.Byte}, Data: nil}
	}
	got, stats, _, err := runTAM(setup{cases: empty, aggs: []int{0}, buf: 16, nodeSize: 1})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Zero(t, stats[0].Rounds)

	cases := subarrayCases(np)
	f := &memFile{}
	rg := refmodel.Ranges(cases)
	err = comm.RunWorld(np, 1, func(c comm.Comm) error {
		a := cases[c.Rank()].Access
		a.Buf = append([]byte(nil), cases[c.Rank()].Data...)
		j := (setup{aggs: []int{0, 2}, buf: 40}).job(c, f, rg, a, nil)
		j.Atomic = true
		return Write(j, NewConfig(topo.Virtual(np, 1), 1))
	})
	require.NoError(t, err)
	require.Equal(t, refmodel.ExpectedFile(cases), f.bytes())
}

// Layer-1 traffic never leaves a node; global aggregators receive
// layer-2 messages from local aggregators only.
func TestTrafficStaysOnNode(t *testing.T) {
	np, nodeSize := 24, 8
	cases := subarrayCases(np)
	rg := refmodel.Ranges(cases)
	nodes := topo.Virtual(np, nodeSize)
	cfg := NewConfig(nodes, 2)
	k := comm.NewCounters()
	reps := make([]Report, np)
	err := comm.RunWorld(np, nodeSize, func(c comm.Comm) error {
		c = comm.Counting(c, k)
		a := cases[c.Rank()].Access
		a.Buf = append([]byte(nil), cases[c.Rank()].Data...)
		cfg := cfg
		cfg.Report = &reps[c.Rank()]
		return Write((setup{aggs: []int{0, 9, 18}, buf: 1 << 20}).job(c, &memFile{}, rg, a, nil), cfg)
	})
	require.NoError(t, err)
	for r := 0; r < np; r++ {
		ph := k.SnapshotRank(r)
		isLocal := cfg.Local.Bind[r] == r
		if !isLocal {
			require.Zero(t, ph[PhaseLayer2].MsgsSent, "rank %d is no local aggregator", r)
			require.Zero(t, ph[PhaseLayer1].MsgsRecv, "rank %d", r)
		}
		require.Equal(t, reps[r].Layer1Recv, ph[PhaseLayer1].MsgsRecv, "rank %d", r)
		require.Equal(t, reps[r].Layer2Recv, ph[PhaseLayer2].MsgsRecv, "rank %d", r)
	}
	for _, g := range []int{0, 9, 18} {
		require.LessOrEqual(t, k.SnapshotRank(g)[PhaseLayer2].MsgsRecv, int64(2*len(cfg.Local.Aggs)))
	}
}

// The reference: where each data byte goes, from the layouts alone.
func fileOffsets(a coll.Access) []int64 { return refmodel.FileOffsets(refmodel.Of(a)) }
func memOffsets(a coll.Access) []int64  { return refmodel.MemOffsets(refmodel.Of(a)) }

// A global aggregator writes a run of tiny pieces (E3SM's) from one buffer
// it copies them into, not with an iovec per piece; the file is the same.
func TestTinyPiecesWriteFromOneBuffer(t *testing.T) {
	const np, elem, per = 8, 4, 1000
	cases := make([]rankCase, np)
	for r := range cases {
		ft := refmodel.Must(layout.Resized(layout.Bytes(elem), 0, np*elem))
		size := int64(per * elem)
		cases[r] = rankCase{Access: coll.Access{Count: size, Filetype: ft, Disp: int64(r) * elem, Size: size}, Data: refmodel.Fill(size, r)}
	}
	s := setup{cases: cases, aggs: []int{0, 4}, buf: 1 << 20, nodeSize: 4, perNode: 1}
	f := &memFile{}
	rg := refmodel.Ranges(s.cases)
	nodes := topo.Virtual(np, s.nodeSize)
	err := comm.RunWorldTimeout(np, s.nodeSize, 60*time.Second, func(c comm.Comm) error {
		a := s.cases[c.Rank()].Access
		a.Buf = append([]byte(nil), s.cases[c.Rank()].Data...)
		return Write(s.job(c, f, rg, a, nil), s.config(nodes))
	})
	require.NoError(t, err)
	require.Equal(t, refmodel.ExpectedFile(cases), f.bytes())
	require.Zero(t, f.vecs, "buffers of vectored writes")
}
