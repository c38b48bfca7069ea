package segment

import (
	"bytes"
	"errors"
	"fmt"
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

// setup says how one collective run goes.
type setup struct {
	aggs     []int
	buf      int64
	atomic   bool
	w, r     Options
	noRead   bool
	openAll  bool // non-aggregators open the file too (else File is nil there)
	noRanges bool // leave Job.Ranges nil (no all-empty shortcut)
	file     func(rank int, f driver.File) driver.File
}

type outcome struct {
	wstats, rstats []metrics.Call
	wio, rio       []IOTime
	werr, rerr     []error
	got            []int64
}

// runCase writes every rank's access with segmentation on an in-memory
// world, then (unless noRead) reads it back into fresh buffers with the
// same layouts and checks the data against want (the expected file).
// Per-rank errors are returned, not failed on.
func runCase(path string, cases []rankCase, s setup, want []byte) (outcome, error) {
	n := len(cases)
	o := outcome{wstats: make([]metrics.Call, n), rstats: make([]metrics.Call, n),
		wio: make([]IOTime, n), rio: make([]IOTime, n), werr: make([]error, n), rerr: make([]error, n), got: make([]int64, n)}
	d := ufs.New()
	rs := refmodel.Ranges(cases)
	if s.noRanges {
		rs = nil
	}
	isAgg := map[int]bool{}
	for _, a := range s.aggs {
		isAgg[a] = true
	}
	err := comm.RunWorldTimeout(n, 0, 5*time.Second, func(c comm.Comm) error {
		r := c.Rank()
		var f driver.File
		if isAgg[r] || s.openAll {
			var err error
			if f, err = d.Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate}); err != nil {
				return err
			}
			defer f.Close()
			if s.file != nil {
				f = s.file(r, f)
			}
		}
		j := &coll.Job{Comm: c, File: f, Aggregators: s.aggs, Ranges: rs, Access: cases[r].Access,
			BufSize: s.buf, Atomic: s.atomic, Stats: &o.wstats[r]}
		o.wio[r], o.werr[r] = WriteWith(j, s.w)
		if s.noRead {
			return nil
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		back := cases[r].Access
		back.Buf = make([]byte, len(back.Buf))
		j.Access, j.Stats = back, &o.rstats[r]
		o.got[r], o.rio[r], o.rerr[r] = ReadWith(j, s.r)
		if o.rerr[r] != nil || want == nil {
			return nil
		}
		fo, mo := fileOffsets(back), memOffsets(back)
		var before int64
		for i := range fo {
			w := byte(0)
			if fo[i] < int64(len(want)) {
				w, before = want[fo[i]], before+1
			}
			if back.Buf[mo[i]] != w {
				return fmt.Errorf("read back: data byte %d (file %d) is %d, want %d", i, fo[i], back.Buf[mo[i]], w)
			}
		}
		if o.got[r] != before {
			return fmt.Errorf("read %d bytes, want %d", o.got[r], before)
		}
		return nil
	})
	return o, err
}

func noErrors(t require.TestingT, o outcome) {
	for r := range o.werr {
		require.NoError(t, o.werr[r], "write, rank %d", r)
		require.NoError(t, o.rerr[r], "read, rank %d", r)
	}
}

var modes = []Options{{false, false}, {false, true}, {true, false}, {true, true}}

func modeName(o Options) string {
	s := "static"
	if o.Dynamic {
		s = "dynamic"
	}
	if o.Overlap {
		s += "+overlap"
	}
	return s
}

// subarrayCases is a coll_perf-like 3-D block distribution over np ranks.
func subarrayCases(np int) []rankCase {
	g := []int{9, 7, 5}
	cases := make([]rankCase, np)
	for r := range np {
		lo, hi := r*g[0]/np, (r+1)*g[0]/np
		sub := refmodel.Must(layout.Subarray(g, []int{hi - lo, g[1], g[2] - 1}, []int{lo, 0, 1}, layout.OrderC, layout.Int32))
		size := sub.Size()
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(size, r), Count: size, Filetype: sub, Size: size}, Data: refmodel.Fill(size, r)}
	}
	return cases
}

func TestSubarrayBlocks(t *testing.T) {
	for _, np := range []int{1, 3, 4, 6} {
		cases := subarrayCases(np)
		want := refmodel.ExpectedFile(cases)
		for naggs := 1; naggs <= np; naggs++ {
			for _, buf := range []int64{7, 64, 1 << 20} {
				for _, m := range modes {
					ok := t.Run(fmt.Sprintf("np%d_aggs%d_buf%d_%s", np, naggs, buf, modeName(m)), func(t *testing.T) {
						aggs := evenAggs(np, naggs)
						if buf == 64 { // aggregators last in their blocks
							for i := range aggs {
								aggs[i] = (i+1)*np/naggs - 1
							}
						}
						path := filepath.Join(t.TempDir(), "f")
						o, err := runCase(path, cases, setup{aggs: aggs, buf: buf, w: m, r: m, atomic: buf == 7}, want)
						require.NoError(t, err)
						noErrors(t, o)
						got, _ := os.ReadFile(path)
						require.Equal(t, want, got)
						for r := range np {
							require.Equal(t, naggs, o.wstats[r].Aggregators)
						}
					})
					if !ok {
						return // one failure is enough (a hang costs a timeout each)
					}
				}
			}
		}
	}
}

// Random block-cyclic views with holes, empty contributions, noncontiguous
// memory, views starting inside the file type, random aggregators, buffer
// sizes and modes (atomic too), up to 64 ranks: the file equals
// independent writes with overlap on and off, and reads return it.
func TestRandomViews(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		np := rapid.SampledFrom([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 33, 64}).Draw(rt, "np")
		blk := int64(4 * rapid.IntRange(1, 5).Draw(rt, "blk"))
		gap := int64(4 * rapid.IntRange(0, 3).Draw(rt, "gap"))
		cases := make([]rankCase, np)
		for r := range np {
			ft := refmodel.Must(layout.Resized(layout.Bytes(blk), 0, int64(np)*(blk+gap)))
			nblocks := int64(rapid.IntRange(0, 6).Draw(rt, "nblocks")) // 0: empty contribution
			size := nblocks * blk
			a := coll.Access{Filetype: ft, Disp: int64(r) * (blk + gap), Size: size}
			cases[r] = refmodel.Vary(rt, a, blk, r) // skip: start one block into the view
		}
		naggs := rapid.IntRange(1, min(np, 16)).Draw(rt, "naggs")
		aggs := rapid.Permutation(seq(np)).Draw(rt, "perm")[:naggs]
		lo := int64(1)
		if np > 12 {
			lo = 32 // keep the cycle count of big worlds moderate
		}
		s := setup{
			aggs:   aggs,
			buf:    rapid.Int64Range(lo, 300).Draw(rt, "cb"),
			atomic: rapid.Bool().Draw(rt, "atomic"),
			w:      Options{Dynamic: rapid.Bool().Draw(rt, "dynamic")},
			r:      Options{Dynamic: rapid.Bool().Draw(rt, "rdynamic"), Overlap: rapid.Bool().Draw(rt, "roverlap")},
		}
		want := refmodel.ExpectedFile(cases)
		var files [2][]byte
		for i, ov := range []bool{false, true} {
			s.w.Overlap = ov
			path := filepath.Join(t.TempDir(), "r")
			o, err := runCase(path, cases, s, want)
			if err != nil {
				rt.Fatal(err)
			}
			noErrors(rt, o)
			files[i], _ = os.ReadFile(path)
		}
		if !bytes.Equal(files[0], files[1]) {
			rt.Fatalf("overlap on and off give different files")
		}
		if !bytes.Equal(want, files[0]) {
			rt.Fatalf("file differs: got %d bytes, want %d", len(files[0]), len(want))
		}
	})
}

// Ranks of one group writing the same bytes: the highest rank wins, as
// with independent writes in rank order, whatever the cycles.
func TestOverlappingViewsInGroup(t *testing.T) {
	const np = 5
	cases := make([]rankCase, np)
	for r := range np {
		// Rank r writes 21 bytes from 7*r in blocks of 3 with a stride of 4
		// (overlapping its neighbours), rank 2 writes one contiguous span.
		ft := refmodel.Must(layout.Resized(layout.Bytes(3), 0, 4))
		if r == 2 {
			ft = layout.Byte
		}
		a := coll.Access{Buf: refmodel.Fill(21, r), Count: 21, Filetype: ft, Disp: int64(7 * r), Size: 21}
		cases[r] = rankCase{Access: a, Data: refmodel.Fill(21, r)}
	}
	want := refmodel.ExpectedFile(cases)
	for _, m := range modes {
		for _, buf := range []int64{1, 5, 16, 1000} {
			t.Run(fmt.Sprintf("%s_buf%d", modeName(m), buf), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "o")
				o, err := runCase(path, cases, setup{aggs: []int{3}, buf: buf, w: m, r: m}, want)
				require.NoError(t, err)
				noErrors(t, o)
				got, _ := os.ReadFile(path)
				require.Equal(t, want, got)
			})
		}
	}
}

func TestAllEmpty(t *testing.T) {
	cases := make([]rankCase, 3)
	for r := range cases {
		cases[r] = rankCase{Access: coll.Access{Filetype: layout.Byte}, Data: nil}
	}
	for i, m := range modes {
		path := filepath.Join(t.TempDir(), "e")
		o, err := runCase(path, cases, setup{aggs: []int{0, 2}, buf: 16, w: m, r: m, noRanges: i%2 == 1}, []byte{})
		require.NoError(t, err)
		noErrors(t, o)
		for r := range cases {
			require.Zero(t, o.wstats[r].Rounds)
			require.Zero(t, o.rstats[r].Rounds)
			require.Zero(t, o.got[r])
		}
		got, _ := os.ReadFile(path)
		require.Empty(t, got)
	}
}

// Rounds, aggregator flags, I/O times and message counts.
func TestStats(t *testing.T) {
	// 6 ranks, contiguous 10-byte pieces each, two groups of 3: 30 bytes
	// per group.
	cases := make([]rankCase, 6)
	for r := range cases {
		cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(10, r), Count: 10, Filetype: layout.Byte, Disp: int64(10 * r), Size: 10}, Data: refmodel.Fill(10, r)}
	}
	want := refmodel.ExpectedFile(cases)
	for _, m := range modes {
		t.Run(modeName(m), func(t *testing.T) {
			o, err := runCase(filepath.Join(t.TempDir(), "s"), cases, setup{aggs: []int{0, 3}, buf: 8, w: m, r: m}, want)
			require.NoError(t, err)
			noErrors(t, o)
			rounds := 4 // dynamic: ceil(30/8)
			if !m.Dynamic {
				rounds = 5 // static: share 8/3 = 2, ceil(10/2)
			}
			for r, st := range o.wstats {
				rst := o.rstats[r]
				agg := r == 0 || r == 3
				require.Equal(t, 2, st.Aggregators)
				require.Equal(t, agg, st.Aggregator)
				require.Equal(t, rounds, st.Rounds)
				require.Equal(t, rounds, rst.Rounds)
				if agg {
					require.Positive(t, o.wio[r].Busy)
					require.Equal(t, o.wio[r].Busy, st.IO)
					require.Equal(t, o.rio[r].Busy, rst.IO)
					if !m.Overlap {
						require.Equal(t, o.wio[r].Busy, o.wio[r].Wait)
					}
					// Two headers and two one-piece lists (an offset
					// and a length varint of a byte each), 20 data bytes.
					require.Equal(t, int64(2*headerLen+2*2+20), st.BytesRecv)
					require.Equal(t, int64(2*headerLen+2*2), rst.BytesRecv)
					require.Equal(t, int64(2*24+20), rst.BytesSent) // plan broadcast, data
				} else {
					require.Zero(t, o.wio[r])
					require.Zero(t, st.IO)
					require.Equal(t, int64(headerLen+2+10), st.BytesSent)
					require.Equal(t, int64(24+10), rst.BytesRecv)
				}
			}
		})
	}
}

// A buffer size far beyond memory: nobody may allocate it.
func TestHugeBuffer(t *testing.T) {
	cases := subarrayCases(4)
	for r := range cases { // noncontiguous memory on odd ranks
		a := &cases[r].Access
		if r%2 == 1 {
			a.MemType = refmodel.Must(layout.Vector(int(a.Size/4), 1, 2, layout.Int32))
			a.Count = 1
			cases[r].Data = refmodel.Fill(a.MemType.Extent(), r)
			a.Buf = append([]byte(nil), cases[r].Data...)
		}
	}
	want := refmodel.ExpectedFile(cases)
	for _, m := range modes {
		path := filepath.Join(t.TempDir(), "h")
		o, err := runCase(path, cases, setup{aggs: []int{0, 2}, buf: 1 << 40, w: m, r: m}, want)
		require.NoError(t, err)
		noErrors(t, o)
		got, _ := os.ReadFile(path)
		require.Equal(t, want, got)
		require.Equal(t, 1, o.wstats[0].Rounds)
	}
}

// Reads past end of file return fewer bytes and zeros there.
func TestShortRead(t *testing.T) {
	cases := subarrayCases(3)
	want := refmodel.ExpectedFile(cases)
	short := want[:len(want)/2]
	for _, m := range modes {
		path := filepath.Join(t.TempDir(), "p")
		require.NoError(t, os.WriteFile(path, short, 0o644))
		n := len(cases)
		got := make([]int64, n)
		err := comm.RunWorldTimeout(n, 0, 20*time.Second, func(c comm.Comm) error {
			r := c.Rank()
			f, err := ufs.New().Open(path, driver.OpenOptions{Flags: driver.ORdWr})
			if err != nil {
				return err
			}
			defer f.Close()
			a := cases[r].Access
			a.Buf = make([]byte, len(a.Buf))
			j := &coll.Job{Comm: c, File: f, Aggregators: []int{1}, Ranges: refmodel.Ranges(cases), Access: a, BufSize: 50}
			if got[r], _, err = ReadWith(j, m); err != nil {
				return err
			}
			for i, fo := range fileOffsets(a) {
				w := byte(0)
				if fo < int64(len(short)) {
					w = short[fo]
				}
				if a.Buf[memOffsets(a)[i]] != w {
					return fmt.Errorf("byte %d", i)
				}
			}
			return nil
		})
		require.NoError(t, err)
		for r, rc := range cases {
			var before int64
			for _, fo := range fileOffsets(rc.Access) {
				if fo < int64(len(short)) {
					before++
				}
			}
			require.Equal(t, before, got[r], "rank %d", r)
		}
	}
}

// faulty fails vectored I/O.
type faulty struct{ driver.File }

var errDisk = errors.New("disk on fire")

func (faulty) WriteV([][]byte, int64) (int, error) { return 0, errDisk }
func (faulty) ReadV([][]byte, int64) (int, error)  { return 0, errDisk }

// A failing aggregator reports its error; the other ranks finish, the
// members of its group read zeros, nobody hangs.
func TestFileErrors(t *testing.T) {
	cases := subarrayCases(6)
	for _, m := range modes {
		path := filepath.Join(t.TempDir(), "x")
		s := setup{aggs: []int{0, 3}, buf: 16, w: m, r: m, file: func(r int, f driver.File) driver.File {
			if r == 3 {
				return faulty{f}
			}
			return f
		}}
		o, err := runCase(path, cases, s, nil)
		require.NoError(t, err)
		for r := range cases {
			if r == 3 {
				require.ErrorIs(t, o.werr[r], errDisk)
				require.ErrorIs(t, o.rerr[r], errDisk)
			} else {
				require.NoError(t, o.werr[r], "rank %d", r)
				require.NoError(t, o.rerr[r], "rank %d", r)
			}
		}
	}
}

// Non-aggregators may have no file; a bad job fails on every rank alike.
func TestJobChecks(t *testing.T) {
	cases := subarrayCases(4)
	want := refmodel.ExpectedFile(cases)
	o, err := runCase(filepath.Join(t.TempDir(), "n"), cases, setup{aggs: []int{1}, buf: 33, w: modes[3], r: modes[2]}, want)
	require.NoError(t, err)
	noErrors(t, o)

	for _, s := range []setup{{aggs: []int{0}, buf: 0}, {aggs: []int{0, 0}, buf: 8}, {aggs: []int{4}, buf: 8}, {buf: 8}} {
		s.noRead, s.openAll = true, true
		o, err := runCase(filepath.Join(t.TempDir(), "b"), cases, s, nil)
		require.NoError(t, err)
		for r := range cases {
			require.Error(t, o.werr[r])
		}
	}
}

// counting counts vectored calls and fails any other read or write (no
// read-modify-write, no plain reads).
type counting struct {
	driver.File
	writes, reads *int
}

func (c counting) WriteV(b [][]byte, off int64) (int, error) {
	*c.writes++
	return c.File.WriteV(b, off)
}

func (c counting) ReadV(b [][]byte, off int64) (int, error) {
	*c.reads++
	return c.File.ReadV(b, off)
}

func (counting) ReadAt([]byte, int64) (int, error)  { return 0, errors.New("unexpected ReadAt") }
func (counting) WriteAt([]byte, int64) (int, error) { return 0, errors.New("unexpected WriteAt") }

// One vectored write per contiguous run; reads run through gaps up to
// maxGap bytes and split at larger ones.
func TestRunsAndGaps(t *testing.T) {
	for _, hole := range []int64{0, 100, maxGap, maxGap + 1} {
		// Two ranks, blocks of 10 bytes interleaved, a hole after every
		// pair: each run is 20 bytes (one block per rank).
		cases := make([]rankCase, 2)
		for r := range cases {
			ft := refmodel.Must(layout.Resized(layout.Bytes(10), 0, 20+hole))
			cases[r] = rankCase{Access: coll.Access{Buf: refmodel.Fill(40, r), Count: 40, Filetype: ft, Disp: int64(10 * r), Size: 40}, Data: refmodel.Fill(40, r)}
		}
		want := refmodel.ExpectedFile(cases)
		for _, m := range modes {
			var w, rd int
			s := setup{aggs: []int{1}, buf: 1 << 20, w: m, r: m, file: func(r int, f driver.File) driver.File {
				return counting{f, &w, &rd}
			}}
			o, err := runCase(filepath.Join(t.TempDir(), "g"), cases, s, want)
			require.NoError(t, err)
			noErrors(t, o)
			runs := 4
			if hole == 0 {
				runs = 1
			}
			require.Equal(t, runs, w, "hole %d: writes", hole)
			reads := 1
			if hole > maxGap {
				reads = 4
			}
			require.Equal(t, reads, rd, "hole %d: reads", hole)
		}
	}
}

// A rank whose buffer is too short reports its error and contributes
// nothing; the others' data is written.
func TestLocalError(t *testing.T) {
	cases := subarrayCases(4)
	cases[1].Access.Buf = cases[1].Access.Buf[:10]
	ok := append([]rankCase(nil), cases...)
	ok[1].Access.Size = 0
	want := refmodel.ExpectedFile(ok)
	for _, m := range modes {
		path := filepath.Join(t.TempDir(), "l")
		o, err := runCase(path, cases, setup{aggs: []int{0, 2}, buf: 40, w: m, noRead: true}, nil)
		require.NoError(t, err)
		for r := range cases {
			if r == 1 {
				require.Error(t, o.werr[r])
			} else {
				require.NoError(t, o.werr[r])
			}
		}
		got, _ := os.ReadFile(path)
		require.Equal(t, want, got)
	}
}

// The reference: where each data byte goes, from the layouts alone.
func fileOffsets(a coll.Access) []int64 { return refmodel.FileOffsets(refmodel.Of(a)) }
func memOffsets(a coll.Access) []int64  { return refmodel.MemOffsets(refmodel.Of(a)) }
