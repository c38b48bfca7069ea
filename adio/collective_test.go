package adio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

func TestChooseStrategy(t *testing.T) {
	inter := []coll.Range{{Start: 0, End: 10}, {Start: 5, End: 15}}
	apart := []coll.Range{{Start: 0, End: 10}, {Start: 10, End: 20}}
	// Disjoint, but not in rank order: each rank reads another rank's block.
	permuted := []coll.Range{{Start: 20, End: 30}, {Start: 0, End: 10}, {Start: 30, End: 40}, {Start: 10, End: 20}}
	// Two ranks over 1000 bytes each, 20 bytes of data: sieving would
	// move 100 times the data.
	sparse := []coll.Range{{Start: 0, End: 1000}, {Start: 5, End: 1005}}
	type where struct {
		nodes   int
		striped bool
	}
	one, many, lustre := where{1, false}, where{4, false}, where{4, true}
	cases := []struct {
		h      map[string]string
		write  bool
		ranges []coll.Range
		at     where
		want   string
	}{
		{nil, true, inter, many, "twophase"},
		{nil, true, inter, one, "independent"},
		{nil, true, inter, lustre, "twophase"},
		{nil, false, inter, one, "independent"},
		{map[string]string{"romio_ds_write": "disable"}, true, inter, one, "twophase"},
		{map[string]string{"romio_ds_read": "disable"}, false, inter, one, "independent"},
		{map[string]string{"romio_ds_read": "disable", "cb_nodes": "1"}, false, inter, one, "dynamic"},
		{map[string]string{"romio_ds_read": "disable"}, true, inter, one, "independent"},
		{nil, true, apart, many, "independent"},
		{nil, false, permuted, many, "independent"}, // IOR -C reads across nodes
		{nil, true, permuted, many, "independent"},
		{nil, true, apart, lustre, "independent"},
		{map[string]string{"romio_cb_write": "enable"}, true, apart, many, "twophase"},
		{map[string]string{"romio_cb_write": "enable"}, true, apart, one, "dynamic"},
		{map[string]string{"romio_cb_write": "enable"}, true, inter, one, "twophase"},
		{map[string]string{"romio_cb_read": "enable"}, false, inter, one, "dynamic"},
		{map[string]string{"romio_cb_write": "disable"}, true, inter, many, "independent"},
		{map[string]string{"romio_cb_write": "disable"}, false, inter, many, "twophase"},
		{map[string]string{"romio_cb_read": "disable"}, false, inter, many, "independent"},
		{map[string]string{"romio_no_indep_rw": "true", "romio_cb_write": "disable"}, true, apart, one, "twophase"},
		{map[string]string{"collio_strategy": "independent", "romio_cb_write": "enable"}, true, inter, many, "independent"},
		{map[string]string{"collio_strategy": "static"}, true, apart, lustre, "static"},
		{map[string]string{"collio_strategy": "tam"}, true, apart, one, "tam"},
	}
	for _, tc := range cases {
		h, err := hints.Resolve(tc.h, hints.Options{Getenv: func(string) string { return "" }})
		require.NoError(t, err)
		sieve := h.Enum(hints.RomioDSRead) != hints.Disable
		if tc.write {
			sieve = h.Enum(hints.RomioDSWrite) != hints.Disable
		}
		var bytes int64 // dense: data fills the ranges
		for _, r := range tc.ranges {
			bytes += r.End - r.Start
		}
		name, reason, err := chooseStrategy(ptr(newConfig(h)), situation{write: tc.write, ranges: tc.ranges, nodes: tc.at.nodes, striped: tc.at.striped, sieve: sieve, bytes: bytes})
		require.NoError(t, err)
		require.Equal(t, tc.want, name, "hints %v write %v at %+v: %s", tc.h, tc.write, tc.at, reason)
		require.NotEmpty(t, reason)
	}
	// Many ranks per node on several nodes: TAM.
	h, _ := hints.Resolve(nil, hints.Options{Getenv: func(string) string { return "" }})
	// Sparse interleaving on one node: sieving would move 100 times the
	// data, so two-phase instead.
	name, reason, err := chooseStrategy(ptr(newConfig(h)), situation{write: true, ranges: sparse, nodes: 1, sieve: true, bytes: 20})
	require.NoError(t, err)
	require.Equal(t, "twophase", name, reason)
	// 16 ranks finely interleaved over the whole range (density 1/16):
	// two-phase; 4 ranks (1/4): sieving.
	for _, tc := range []struct {
		ranks int
		want  string
	}{{16, "twophase"}, {4, "independent"}} {
		all := make([]coll.Range, tc.ranks)
		for r := range all {
			all[r] = coll.Range{Start: int64(r), End: 1000 + int64(r)}
		}
		name, reason, _ := chooseStrategy(ptr(newConfig(h)), situation{write: true, ranges: all, nodes: 1, sieve: true, bytes: 1000})
		require.Equal(t, tc.want, name, "%d ranks: %s", tc.ranks, reason)
	}
	// The reason says whether sieving will merge anything: with
	// romio_ds_* automatic, pieces of 32 KiB and more are moved alone.
	quarter := make([]coll.Range, 4)
	for r := range quarter {
		quarter[r] = coll.Range{Start: int64(r), End: 1000 + int64(r)}
	}
	dsEnable, _ := hints.Resolve(map[string]string{"romio_ds_read": "enable"}, hints.Options{Getenv: func(string) string { return "" }})
	for _, tc := range []struct {
		h      *hints.Set
		pieces int64
		want   string
	}{
		{h, 100, "with data sieving of the pieces under 32 KiB (automatic)"},
		{h, 2, "moving its pieces (128000 bytes on average) alone: automatic data sieving merges pieces under 32 KiB"},
		{dsEnable, 2, "with data sieving"},
	} {
		name, reason, _ := chooseStrategy(ptr(newConfig(tc.h)), situation{ranges: quarter, nodes: 1, sieve: true, bytes: 256000, pieces: tc.pieces})
		require.Equal(t, "independent", name, reason)
		require.True(t, strings.HasSuffix(reason, "independent I/O "+tc.want), reason)
	}
	wide := make([]coll.Range, 64)
	for r := range wide {
		wide[r] = coll.Range{Start: int64(r), End: int64(r + 10)}
	}
	name, _, err = chooseStrategy(ptr(newConfig(h)), situation{write: true, ranges: wide, nodes: 2})
	require.NoError(t, err)
	require.Equal(t, "tam", name)
	name, _, _ = chooseStrategy(ptr(newConfig(h)), situation{write: true, ranges: wide, nodes: 8})
	require.Equal(t, "twophase", name, "8 ranks per node are too few for TAM")
	// Interleaved reads on one node without sieving: each rank reads its
	// own pieces, unless they are tiny, which two-phase merges.
	noDS, _ := hints.Resolve(map[string]string{"romio_ds_read": "disable"}, hints.Options{Getenv: func(string) string { return "" }})
	for _, tc := range []struct {
		pieces int64
		want   string
	}{{2, "independent"}, {20000, "twophase"}} {
		name, reason, _ := chooseStrategy(ptr(newConfig(noDS)), situation{ranges: inter, nodes: 1, bytes: 20 << 10, pieces: tc.pieces})
		require.Equal(t, tc.want, name, "%d pieces: %s", tc.pieces, reason)
	}
	// Collective buffering on one node: segmentation, unless the pieces
	// are tiny (E3SM's), which two-phase merges.
	enable, _ := hints.Resolve(map[string]string{"romio_cb_write": "enable"}, hints.Options{Getenv: func(string) string { return "" }})
	for _, tc := range []struct {
		pieces int64
		want   string
	}{{0, "dynamic"}, {2, "dynamic"}, {20000, "twophase"}} {
		name, reason, _ := chooseStrategy(ptr(newConfig(enable)), situation{write: true, ranges: apart, nodes: 1, bytes: 20 << 10, pieces: tc.pieces})
		require.Equal(t, tc.want, name, "%d pieces: %s", tc.pieces, reason)
	}
}

// One rank calling read_all while the others call write_all is an error
// on every rank, not a hang or a corrupt file.
func TestMismatchedCollectiveCalls(t *testing.T) {
	path := tempPath(t, "mm")
	errs := sameOnAll(t, 3, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, 8)
		if c.Rank() == 2 {
			_, err = f.ReadAtAll(Bytes(buf), 0)
		} else {
			_, err = f.WriteAtAll(Bytes(buf), int64(8*c.Rank()))
		}
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrNotSame)
	require.Contains(t, errs[0].Error(), "read_at_all")
	require.Empty(t, readFile(t, path))
}

// Ranks that call collectives on different files time out instead of
// hanging.
func TestCollectiveOnDifferentFilesTimesOut(t *testing.T) {
	a, b := tempPath(t, "a"), tempPath(t, "b")
	world(t, 2, func(c comm.Comm) error {
		h := map[string]string{"collio_collective_timeout": "1"}
		fa, err := Open(c, a, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		fb, err := Open(c, b, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		target := fa
		if c.Rank() == 1 {
			target = fb
		}
		_, err = target.WriteAtAll(Bytes([]byte{1}), 0)
		if !errors.Is(err, ioerr.ErrTimeout) {
			return fmt.Errorf("want a timeout, got %v", err)
		}
		if err := target.Close(); !errors.Is(err, ioerr.ErrBadFile) {
			return fmt.Errorf("close after timeout: %v", err)
		}
		return nil
	})
}

// Metrics of a two-phase call: rounds, aggregators, messages.
func TestTwoPhaseStats(t *testing.T) {
	path := tempPath(t, "st")
	world(t, 4, func(c comm.Comm) error {
		h := map[string]string{"cb_buffer_size": "64", "cb_config_list": "*:2", "collio_node_size": "2"}
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
		if err != nil {
			return err
		}
		defer f.Close()
		// Interleaved 16-byte records: rank r owns records r, r+4, ...
		ft := must(layout.Resized(layout.Bytes(16), 0, 64))
		if err := f.SetView(View{Disp: int64(16 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
			return err
		}
		if _, err := f.WriteAtAll(Bytes(rankData(c.Rank(), 256)), 0); err != nil {
			return err
		}
		last, total := f.Stats()
		if last.Strategy != "twophase" || last.Aggregators != 4 || last.Rounds != 4 || !strings.HasPrefix(last.Reason, "accesses interleave") {
			return fmt.Errorf("unexpected stats %v", last)
		}
		if last.MsgsSent == 0 || last.BytesSent < 192 || total.Bytes != 256 {
			return fmt.Errorf("unexpected counts %v", last)
		}
		if got := f.Info()["cb_nodes"]; got != "4" {
			return fmt.Errorf("cb_nodes echoed as %s", got)
		}
		return nil
	})
	want := []byte{}
	for r := 0; r < 4; r++ {
		v := View{Disp: int64(16 * r), Etype: layout.Byte, Filetype: must(layout.Resized(layout.Bytes(16), 0, 64))}
		want = expected(want, v, 0, rankData(r, 256))
	}
	require.Equal(t, want, readFile(t, path))
}

// The independent strategy accounts its file I/O in the call's metrics
// (all of it waited for), as the collective strategies do.
func TestIndependentStats(t *testing.T) {
	path := tempPath(t, "f")
	world(t, 3, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"collio_strategy": "independent"}})
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.WriteAtAll(Bytes(rankData(c.Rank(), 1<<16)), int64(c.Rank())<<16); err != nil {
			return err
		}
		last, _ := f.Stats()
		if last.Strategy != "independent" || last.IO <= 0 || last.IOWait != last.IO {
			return fmt.Errorf("rank %d: independent write stats %v", c.Rank(), last)
		}
		got := make([]byte, 1<<16)
		if _, err := f.ReadAtAll(Bytes(got), int64(c.Rank())<<16); err != nil {
			return err
		}
		if last, _ = f.Stats(); last.IO <= 0 {
			return fmt.Errorf("rank %d: independent read stats %v", c.Rank(), last)
		}
		return nil
	})
}

func TestVolumeAggregators(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		total, per  int64
		limit, want int
	}{
		{0, 32 * mib, 8, 1},          // nothing to move: one
		{1, 32 * mib, 8, 1},          // a few bytes: one
		{32 * mib, 32 * mib, 8, 1},   // exactly one's share
		{32*mib + 1, 32 * mib, 8, 2}, // a byte more: two
		{1 << 40, 32 * mib, 8, 8},    // never more than one per node
		{mib, 0, 8, 8},               // 0: one per node
		{mib, 32 * mib, 1, 1},
	} {
		require.Equal(t, tc.want, volumeAggregators(tc.total, tc.per, tc.limit), "%+v", tc)
	}
}

// On several nodes without striping, a call's automatic aggregators
// follow its data volume (collio_bytes_per_aggregator): a small call gets
// one, a large one one per node; the bytes are right either way.
func TestAggregatorsFollowVolume(t *testing.T) {
	const n = 8 // 4 virtual nodes of 2 ranks
	for _, tc := range []struct {
		perRank  int64
		wantAggs int
	}{{512, 1}, {1 << 10, 2}, {64 << 10, 4}} {
		path := tempPath(t, "f")
		h := map[string]string{"collio_strategy": "twophase", "collio_node_size": "2", "collio_bytes_per_aggregator": "4k"}
		world(t, n, func(c comm.Comm) error {
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.WriteAtAll(Bytes(rankData(c.Rank(), tc.perRank)), int64(c.Rank())*tc.perRank); err != nil {
				return err
			}
			if last, _ := f.Stats(); last.Aggregators != tc.wantAggs {
				return fmt.Errorf("%d bytes per rank: %d aggregators, want %d", tc.perRank, last.Aggregators, tc.wantAggs)
			}
			return nil
		})
		got := readFile(t, path)
		for r := 0; r < n; r++ {
			require.Equal(t, rankData(r, tc.perRank), got[int64(r)*tc.perRank:int64(r+1)*tc.perRank], "rank %d", r)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The calls the Go API does not have (set_info, set_view with
// MPI_DISPLACEMENT_CURRENT) meet the others in their first step too: every
// rank returns ErrNotSame naming both calls, and the file stays usable.
func TestMismatchedNonTransferCalls(t *testing.T) {
	calls := map[string]func(f *File) error{
		"set_info": func(f *File) error { return f.SetInfo(map[string]string{"cb_buffer_size": "65536"}, false) },
		"set_view (MPI_DISPLACEMENT_CURRENT)": func(f *File) error {
			_, err := f.CurrentDisplacement()
			return err
		},
		"set_view": func(f *File) error { return f.SetView(View{Etype: layout.Byte, Filetype: layout.Byte}, nil) },
		"sync":     func(f *File) error { return f.Sync() },
	}
	for a, callA := range calls {
		for b, callB := range calls {
			if a == b {
				continue
			}
			t.Run(a+"-vs-"+b, func(t *testing.T) {
				path := tempPath(t, "mm")
				errs := sameOnAll(t, 3, func(c comm.Comm) error {
					f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
					if err != nil {
						return err
					}
					call := callB
					if c.Rank() == 0 {
						call = callA
					}
					err = call(f)
					if cerr := f.Close(); cerr != nil {
						return fmt.Errorf("close after the mismatch: %w", cerr)
					}
					return err
				})
				require.ErrorIs(t, errs[0], ioerr.ErrNotSame)
				require.Contains(t, errs[0].Error(), "rank 0 is in "+a+", rank 1 in "+b)
			})
		}
	}
}

// An error owed by a deferred transfer is not lost to a mismatch: the
// next synchronizing call that every rank makes returns it.
func TestOwedErrorOutlivesMismatch(t *testing.T) {
	path := tempPath(t, "owed")
	errs := sameOnAll(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		f.owe("write_all", f.seq, ioerr.New(ioerr.ErrIO, "write_all", "injected on rank %d", c.Rank()))
		if c.Rank() == 0 {
			err = f.Sync()
		} else {
			err = f.SetAtomicity(false)
		}
		if !errors.Is(err, ioerr.ErrNotSame) {
			return fmt.Errorf("mismatched call returned %v, want ErrNotSame", err)
		}
		return f.Sync()
	})
	require.ErrorIs(t, errs[0], ioerr.ErrIO)
	require.Contains(t, errs[0].Error(), "injected on rank 0")
}

// A collective read past end of file returns, with every strategy, the
// rank's bytes before the end and those bytes as the file holds them;
// two-phase and TAM agree on the end in their closing step
// (coll.EndOfFile) instead of asking the file in every call.
func TestCollectiveReadPastEOF(t *testing.T) {
	const n, b = 4, int64(1024)
	content := refmodel.Fill(16*b, 7)
	for _, strategy := range []string{"twophase", "tam", "dynamic", "static", "independent"} {
		for _, size := range []int64{16 * b, 10*b + b/2, 3 * b, 0} {
			path := tempPath(t, "eof")
			require.NoError(t, os.WriteFile(path, content[:size], 0o644))
			h := map[string]string{"collio_strategy": strategy, "collio_node_size": "2", "romio_cb_read": "enable"}
			world(t, n, func(c comm.Comm) error {
				f, err := Open(c, path, ModeRdWr, OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				defer f.Close()
				// Rank r reads blocks r, r+4, r+8 and r+12.
				ft := must(layout.Resized(layout.Bytes(b), 0, n*b))
				if err := f.SetView(View{Disp: int64(c.Rank()) * b, Etype: layout.Byte, Filetype: ft}, nil); err != nil {
					return err
				}
				var want []byte
				for k := int64(0); k < 4; k++ {
					at := (int64(c.Rank()) + n*k) * b
					want = append(want, content[min(at, size):min(at+b, size)]...)
				}
				for call := 0; call < 2; call++ { // the second reuses the call's buffers
					buf := make([]byte, 4*b)
					got, err := f.ReadAtAll(Bytes(buf), 0)
					if err != nil {
						return err
					}
					if got != int64(len(want)) || !bytes.Equal(buf[:got], want) {
						return fmt.Errorf("%s, file of %d bytes, call %d: rank %d read %d bytes, want %d (same bytes: %v)",
							strategy, size, call, c.Rank(), got, len(want), bytes.Equal(buf[:min(got, int64(len(want)))], want[:min(got, int64(len(want)))]))
					}
				}
				return nil
			})
		}
	}
}
