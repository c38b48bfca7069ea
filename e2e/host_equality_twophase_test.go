//go:build cgo

package e2e

// Two-phase collective buffering under MPI: the write variants that force
// it (and its knobs) for TestHostEquality, and the shapes that stress it.

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

// Strategy names as Stats reports them.
const (
	stratTwoPhase    = "twophase"
	stratIndependent = "independent"
)

// defaultCBBuffer is cb_buffer_size's default (16 MiB).
const defaultCBBuffer = 16 << 20

// fullTwoPhase names the shapes that run every two-phase knob; the others
// run only the basic two-phase and collective-independent variants.
var fullTwoPhase = map[string]bool{
	"subarray-C": true, "subarray-C-memvector": true,
	"struct-resized": true, "struct-memvector": true,
	"indexed": true, "darray-C-cyclic": true, "empty-rank": true,
	"block-cyclic-1d": true, "records8": true, "holes-every-rank": true,
	"some-ranks-empty": true, "nothing": true,
}

// cbHints forces collective buffering for writes and reads with an
// aggregator on every rank (up to cb_nodes), plus the extra key/value
// pairs.
func cbHints(kv ...string) collio.Hints {
	h := collio.Hints{"romio_cb_write": "enable", "romio_cb_read": "enable", "cb_config_list": "*:*", "collio_strategy": "twophase"}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// variantsFor returns the write variants run for a shape on p ranks: the
// common ones, collective writes through each strategy, and for the shapes
// in fullTwoPhase two-phase with each knob varied.
func variantsFor(shape string, p int) []writeVariant {
	rw := collio.ModeCreate | collio.ModeRdWr
	vs := slices.Clone(writeVariants)
	vs = append(vs,
		writeVariant{name: "coll-indep", mode: rw, collective: true, strategy: stratIndependent, readBack: true,
			hints: collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable"}},
		writeVariant{name: fmt.Sprintf("tp-agg%d", p), mode: rw, collective: true, strategy: stratTwoPhase,
			aggs: p, readBack: true, wantRMW: shape == "holes-every-rank",
			hints: cbHints("cb_nodes", strconv.Itoa(p))},
		// OMPIO's segmentations: groups of ranks, holes never written,
		// small cycle buffers so cycles cut pieces.
		writeVariant{name: "seg-dynamic", mode: rw, collective: true, strategy: "dynamic", readBack: true,
			aggs: min(2, p), noRMW: true, hints: cbHints("collio_strategy", "dynamic", "cb_nodes", "2", "cb_buffer_size", "1000")},
		writeVariant{name: "seg-static", mode: rw, collective: true, strategy: "static", readBack: true,
			aggs: min(2, p), noRMW: true, hints: cbHints("collio_strategy", "static", "cb_nodes", "2", "cb_buffer_size", "1000")},
		writeVariant{name: "seg-dynamic-overwrite", mode: rw, collective: true, strategy: "dynamic", readBack: true,
			overwrite: true, aggs: p, noRMW: true, hints: cbHints("collio_strategy", "dynamic", "cb_nodes", strconv.Itoa(p), "cb_buffer_size", "64", "collio_overlap", "disable")},
		// TAM on 1 and 2 virtual nodes (collio_node_size): node-local first
		// layer, then the global aggregators.
		writeVariant{name: "tam-1node", mode: rw, collective: true, strategy: "tam", readBack: true,
			aggs: min(2, p), hints: cbHints("collio_strategy", "tam", "cb_nodes", "2", "cb_buffer_size", "1000")},
		writeVariant{name: "tam-2nodes", mode: rw, collective: true, strategy: "tam", readBack: true,
			aggs: (p + 1) / 2, hints: cbHints("collio_strategy", "tam", "collio_node_size", "2", "cb_config_list", "*:1", "cb_buffer_size", "64")},
		writeVariant{name: "seg-static-overwrite", mode: rw, collective: true, strategy: "static", readBack: true,
			overwrite: true, aggs: 1, noRMW: true, hints: cbHints("collio_strategy", "static", "cb_nodes", "1", "cb_buffer_size", "64")})
	// The E10 cache (writeCollio adds e10_cache_path): each flush policy,
	// 1..4 copy workers, small copy chunks; read back collectively before
	// anything was synced only where the file stays open (2calls).
	vs = append(vs,
		writeVariant{name: "e10-tp", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			aggs: min(2, p), cbBuf: 1000, hints: cbHints("cb_nodes", "2", "cb_buffer_size", "1000",
				"e10_cache", "enable", "e10_cache_threads", "3", "ind_wr_buffer_size", "100")},
		writeVariant{name: "e10-dynamic-onclose", mode: rw, collective: true, strategy: "dynamic", readBack: true,
			noRMW: true, hints: cbHints("collio_strategy", "dynamic", "cb_nodes", "2", "cb_buffer_size", "1000",
				"e10_cache", "enable", "e10_cache_flush_flag", "flush_onclose")},
		writeVariant{name: "e10-indep-none", mode: rw, collective: true, strategy: stratIndependent, readBack: true,
			hints: collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable",
				"e10_cache": "enable", "e10_cache_flush_flag": "flush_none", "e10_cache_threads": "2"}},
		writeVariant{name: "e10-coherent-2calls", mode: rw, collective: true, twoWrites: true, strategy: stratTwoPhase,
			readBack: true, aggs: p, hints: cbHints("cb_nodes", strconv.Itoa(p), "e10_cache", "coherent",
				"e10_cache_threads", "4", "ind_wr_buffer_size", "64")})
	if shape == "subarray-runs" {
		// Virtual nodes of 2 ranks, one aggregator each: affinity by node
		// (checkWriteStats).
		vs = append(vs, writeVariant{name: "tp-nodes-affinity", mode: rw, collective: true, strategy: stratTwoPhase,
			readBack: true, aggs: (p + 1) / 2, hints: cbHints("collio_node_size", "2", "cb_config_list", "*:1")})
	}
	if !fullTwoPhase[shape] {
		return vs
	}
	vs = append(vs,
		// Read-modify-write of holes over cached data, on an existing file.
		writeVariant{name: "e10-tp-overwrite-rmw", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			overwrite: true, aggs: min(2, p), cbBuf: 64, hints: cbHints("cb_nodes", "2", "cb_buffer_size", "64",
				"romio_ds_write", "enable", "e10_cache", "enable", "e10_cache_flush_flag", "flush_onclose",
				"e10_cache_threads", "2")},
		writeVariant{name: "e10-static-deferred", mode: rw, collective: true, strategy: "static", readBack: true,
			aggs: min(2, p), noRMW: true, hints: cbHints("collio_strategy", "static", "cb_nodes", "2",
				"cb_buffer_size", "64", "e10_cache", "enable", "e10_cache_deferred_close", "enable")},
		writeVariant{name: "e10-tam-2nodes", mode: rw, collective: true, strategy: "tam", readBack: true,
			aggs: (p + 1) / 2, hints: cbHints("collio_strategy", "tam", "collio_node_size", "2", "cb_config_list", "*:1",
				"cb_buffer_size", "64", "e10_cache", "enable", "e10_cache_threads", "2")})
	seen := map[int]bool{p: true}
	for _, k := range []int{1, 2} {
		k = min(k, p)
		if seen[k] {
			continue
		}
		seen[k] = true
		vs = append(vs, writeVariant{name: fmt.Sprintf("tp-agg%d", k), mode: rw, collective: true,
			strategy: stratTwoPhase, aggs: k, readBack: true, hints: cbHints("cb_nodes", strconv.Itoa(k))})
	}
	two := min(2, p)
	vs = append(vs,
		// Tiny buffers: many rounds, windows that cut records and blocks.
		writeVariant{name: "tp-buf64", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			aggs: p, cbBuf: 64, hints: cbHints("cb_nodes", strconv.Itoa(p), "cb_buffer_size", "64")},
		writeVariant{name: "tp-buf1000", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			aggs: two, cbBuf: 1000, hints: cbHints("cb_nodes", "2", "cb_buffer_size", "1000")},
		// Each round's file I/O after its exchange, not overlapped with
		// the next round's.
		writeVariant{name: "tp-sequential", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			aggs: two, cbBuf: 64, hints: cbHints("cb_nodes", "2", "cb_buffer_size", "64", "collio_overlap", "disable")},
		// No read-modify-write: each contiguous run is written alone.
		writeVariant{name: "tp-nods", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			aggs: two, cbBuf: 64, noRMW: true,
			hints: cbHints("cb_nodes", "2", "cb_buffer_size", "64", "romio_ds_write", "disable")},
		// Only the aggregators open the file; romio_no_indep_rw alone
		// forces two-phase.
		writeVariant{name: "tp-noindep", mode: collio.ModeCreate | collio.ModeWrOnly, collective: true,
			strategy: stratTwoPhase, readBack: true, aggs: two,
			hints: collio.Hints{"romio_no_indep_rw": "true", "cb_config_list": "*:*", "cb_nodes": "2"}},
		writeVariant{name: "tp-atomic", mode: rw, collective: true, atomic: true, strategy: stratTwoPhase,
			readBack: true, aggs: p, cbBuf: 1000,
			hints: cbHints("cb_nodes", strconv.Itoa(p), "cb_buffer_size", "1000")},
		// An explicit collio_strategy wins over romio_cb_write/read.
		writeVariant{name: "tp-strategy", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			hints: collio.Hints{"collio_strategy": "twophase", "romio_cb_write": "disable", "romio_cb_read": "disable"}},
		writeVariant{name: "indep-strategy", mode: rw, collective: true, strategy: stratIndependent, readBack: true,
			hints: cbHints("collio_strategy", "independent")},
		// Two collective calls; from contiguous memory at the individual
		// file pointer.
		writeVariant{name: "tp-2calls", mode: rw, collective: true, twoWrites: true, strategy: stratTwoPhase,
			readBack: true, aggs: p, hints: cbHints("cb_nodes", strconv.Itoa(p))},
		// Over existing data: the holes of every window must keep it.
		writeVariant{name: "tp-overwrite", mode: rw, collective: true, strategy: stratTwoPhase, readBack: true,
			overwrite: true, aggs: two, cbBuf: 64, hints: cbHints("cb_nodes", "2", "cb_buffer_size", "64")},
		writeVariant{name: "tp-overwrite-nods", mode: rw, collective: true, strategy: stratTwoPhase,
			overwrite: true, aggs: p, cbBuf: 1000, noRMW: true,
			hints: cbHints("cb_nodes", strconv.Itoa(p), "cb_buffer_size", "1000", "romio_ds_write", "disable")},
		writeVariant{name: "coll-indep-overwrite", mode: rw, collective: true, strategy: stratIndependent,
			overwrite: true, hints: collio.Hints{"romio_cb_write": "disable", "romio_ds_write": "enable"}},
	)
	return vs
}

// seedBackground creates v's file filled with background data, covering
// two thirds of the host's file and a few bytes more, so that the write
// both overwrites existing bytes and extends the file.
func (e *equalityRun) seedBackground(v writeVariant) {
	t, c := e.t, e.c
	if c.Rank() == 0 && e.bg == nil {
		ref, err := os.ReadFile(e.paths["host"])
		if err != nil {
			t.Errorf("reading the host's file: %v", err)
		}
		e.bg = pattern(len(ref)*2/3+5, 99, 1)
	}
	checkpoint(t, c)
	seed(t, c, e.paths[v.name], e.bg)
}

// overlay is the file expected after writing over bg: the host's file's
// data bytes (its nonzero bytes, see pattern) laid over bg.
func overlay(bg, ref []byte) []byte {
	out := make([]byte, max(len(bg), len(ref)))
	copy(out, bg)
	for i, b := range ref {
		if b != 0 {
			out[i] = b
		}
	}
	return out
}

// writeTwoCollective writes the data in two collective calls, each rank
// splitting its part in the middle: WriteAll at the individual file
// pointer from contiguous memory, WriteAtAllBuffer otherwise.
func (e *equalityRun) writeTwoCollective(f *collio.File) (int64, error) {
	sh := e.sh
	half := sh.units() / 2
	if sh.mem != nil {
		n1, err := e.write(f, 0, half, true)
		if err != nil {
			return n1, err
		}
		n2, err := e.write(f, half, sh.units(), true)
		return n1 + n2, err
	}
	if _, err := f.Seek(sh.off, io.SeekStart); err != nil {
		return 0, err
	}
	n1, err := f.WriteAll(e.buf[:half*sh.esize])
	if err != nil {
		return int64(n1), err
	}
	if pos, want := f.Position(), sh.off+int64(half); pos != want {
		return int64(n1), fmt.Errorf("file pointer at %d after the first write_all, want %d", pos, want)
	}
	n2, err := f.WriteAll(e.buf[half*sh.esize:])
	if pos, want := f.Position(), sh.off+int64(sh.units()); err == nil && pos != want {
		err = fmt.Errorf("file pointer at %d after the second write_all, want %d", pos, want)
	}
	return int64(n1 + n2), err
}

// checkStrategy checks that a collective call recorded a strategy and a
// reason, and that the strategy is want (any known one if want is "").
func checkStrategy(last collio.Stats, want string) error {
	switch {
	case last.Strategy == "" || last.Reason == "":
		return fmt.Errorf("%s: no strategy recorded (stats: %v)", last.Op, last)
	case want != "" && last.Strategy != want:
		return fmt.Errorf("%s ran %s (%s), want %s", last.Op, last.Strategy, last.Reason, want)
	case want == "" && !slices.Contains([]string{stratTwoPhase, stratIndependent, "dynamic", "static", "tam"}, last.Strategy):
		return fmt.Errorf("%s ran unknown strategy %q (%s)", last.Op, last.Strategy, last.Reason)
	}
	return nil
}

// checkWriteStats checks a collective write's metrics: the strategy, the
// aggregators the hints give, and for two-phase at least the rounds that
// the data needs (the largest file domain is at least total/aggregators
// bytes and each round moves at most cb_buffer_size of it), none when
// there is no data.
func (e *equalityRun) checkWriteStats(f *collio.File, last collio.Stats, v writeVariant) error {
	if err := checkStrategy(last, v.strategy); err != nil {
		return err
	}
	aggs := f.Aggregators()
	if v.aggs > 0 && len(aggs) != v.aggs {
		return fmt.Errorf("aggregators %v, want %d of them", aggs, v.aggs)
	}
	if last.Strategy != stratTwoPhase {
		return nil
	}
	if e.total == 0 {
		if last.Rounds != 0 {
			return fmt.Errorf("%d rounds with no data anywhere", last.Rounds)
		}
		return nil
	}
	explicit := v.hints["cb_nodes"] != "" || v.hints["cb_config_list"] != ""
	switch {
	case explicit && last.Aggregators != len(aggs):
		return fmt.Errorf("stats report %d aggregators, the file has %v", last.Aggregators, aggs)
	case explicit && last.Aggregator != slices.Contains(aggs, e.c.Rank()):
		return fmt.Errorf("stats say aggregator=%v, aggregators are %v", last.Aggregator, aggs)
	case !explicit && (last.Aggregators < 1 || last.Aggregators > e.c.Size()):
		// Chosen per call (collio_auto_aggregators): every rank on one node.
		return fmt.Errorf("stats report %d aggregators of %d ranks", last.Aggregators, e.c.Size())
	}
	// Every rank aggregates, and each writes whole 64 KiB blocks: the
	// entry record shows own blocks, and nothing is planned or exchanged.
	own := strings.HasPrefix(last.Domains, "own blocks: ")
	if e.sc == "subarray-runs" && v.name == fmt.Sprintf("tp-agg%d", e.c.Size()) && e.c.Size() > 1 && !own {
		return fmt.Errorf("file domains %q, want own blocks", last.Domains)
	}
	if own && (last.MsgsSent != 0 || last.MsgsRecv != 0) {
		return fmt.Errorf("own blocks, yet %d messages sent and %d received", last.MsgsSent, last.MsgsRecv)
	}
	if v.name == "tp-nodes-affinity" && e.c.Size() > 2 && !strings.HasPrefix(last.Domains, "affinity by node: ") {
		return fmt.Errorf("file domains %q, want affinity by node", last.Domains)
	}
	buf := v.cbBuf
	if buf == 0 {
		buf = defaultCBBuffer
	}
	if own {
		// Each rank runs the rounds its own data needs.
		if need := (int64(e.sh.nbytes) + buf - 1) / buf; int64(last.Rounds) != need {
			return fmt.Errorf("own blocks: %d rounds for this rank's %d bytes with cb_buffer_size %d, want %d", last.Rounds, e.sh.nbytes, buf, need)
		}
		return nil
	}
	per := int64(last.Aggregators) * buf
	if need := (e.total + per - 1) / per; int64(last.Rounds) < need {
		return fmt.Errorf("%d rounds for %d bytes over %d aggregators with cb_buffer_size %d, want at least %d",
			last.Rounds, e.total, last.Aggregators, buf, need)
	}
	return nil
}

// rmwOff reports whether collio turns read-modify-write off for path
// (collective): its ranks span nodes of a file system whose per-node
// caches locks do not keep coherent (GlusterFS in the emulated cluster).
func rmwOff(t *testing.T, c comm.Comm, path string) bool {
	node, err := c.SplitNode()
	together(t, c, err, "splitting by node")
	spans := node.Size() < c.Size()
	node.Free()
	return spans && driver.IncoherentCaches(ufs.New(), path, 0) != ""
}

// checkRMW checks, on every rank, the read-modify-write promises of v.
func (e *equalityRun) checkRMW(last collio.Stats, v writeVariant) {
	t, c := e.t, e.c
	var did int64
	if last.RMW > 0 {
		did = 1
	}
	if v.noRMW && did != 0 {
		t.Errorf("%s: rank %d read-modify-wrote (%v) with romio_ds_write=disable", v.name, c.Rank(), last.RMW)
	}
	// Own blocks (on every rank alike) write each run, never over holes.
	own := strings.HasPrefix(last.Domains, "own blocks: ")
	if v.wantRMW && !own && !rmwOff(t, c, e.paths[v.name]) && sumInt64(t, c, did) == 0 && c.Rank() == 0 {
		t.Errorf("%s: no aggregator read-modify-wrote, yet every window has holes", v.name)
	}
	checkpoint(t, c)
}

// ---------------------------------------------------------------------------
// Shapes for two-phase.

// subarrayRuns: coll_perf's layout at a size where each rank's runs are
// whole 64 KiB blocks: an 8x256x128 array of ints on a 2-D process grid
// (the last dimension whole), 1 MiB in all. Two-phase's automatic file
// domains on one node are then affinity domains that keep every block at
// its writer (checkWriteStats).
func subarrayRuns(p, r int) (*shape, error) {
	px, py := grid2(p)
	xlo, xhi := split(8, px, r/py)
	ylo, yhi := split(256, py, r%py)
	sub, start := []int{xhi - xlo, yhi - ylo, 128}, []int{xlo, ylo, 0}
	n := sub[0] * sub[1] * sub[2] * 4
	if n == 0 {
		sub, start = []int{1, 1, 128}, []int{0, 0, 0}
	}
	ft, err := mpi.TypeSubarray([]int{8, 256, 128}, sub, start, mpi.OrderC, mpi.TypeInt())
	return &shape{etype: mpi.TypeInt(), esize: 4, filetype: ft, nbytes: n}, err
}

// blockCyclic1D: a 1-D array of doubles in blocks of 37 (296 bytes, not a
// multiple of any cb_buffer_size used); rank r owns blocks r, r+p, r+2p,
// ... and writes 5 of them.
func blockCyclic1D(p, r int) (*shape, error) {
	const b = 37
	ct, err := mpi.TypeContiguous(b, mpi.TypeDouble())
	ft, err := resized(ct, err, 0, int64(8*b*p))
	return &shape{disp: int64(8 * b * r), etype: mpi.TypeDouble(), esize: 8, filetype: ft, nbytes: 5 * b * 8}, err
}

// records8: 8-byte records dealt round-robin to the ranks, 200 each.
func records8(p, r int) (*shape, error) {
	ct, err := mpi.TypeContiguous(1, mpi.TypeDouble())
	ft, err := resized(ct, err, 0, int64(8*p))
	return &shape{disp: int64(8 * r), etype: mpi.TypeDouble(), esize: 8, filetype: ft, nbytes: 200 * 8}, err
}

// holesEveryRank: 16-byte slots, one per rank per tile, each holding 3
// ints and a 4-byte hole, so every window has holes to read-modify-write;
// 40 tiles, written from memory where every other int is a hole.
func holesEveryRank(p, r int) (*shape, error) {
	ct, err := mpi.TypeContiguous(3, mpi.TypeInt())
	ft, err := resized(ct, err, 0, int64(16*p))
	return &shape{disp: int64(16 * r), etype: mpi.TypeInt(), esize: 4, filetype: ft, nbytes: 40 * 12,
		mem: &memVector{elem: mpi.TypeInt(), esize: 4, count: 3, blocklen: 1, stride: 2, n: 40}}, err
}

// someRanksEmpty: 5-int slots per rank per tile; only the odd ranks and
// the last write (43 ints from int 2 of their view), so rank 0, an
// aggregator in every configuration, contributes nothing when p > 1.
func someRanksEmpty(p, r int) (*shape, error) {
	ct, err := mpi.TypeContiguous(5, mpi.TypeInt())
	ft, err := resized(ct, err, 0, int64(20*p))
	n := 0
	if r%2 == 1 || r == p-1 {
		n = 43 * 4
	}
	return &shape{disp: int64(20 * r), etype: mpi.TypeInt(), esize: 4, filetype: ft, off: 2, nbytes: n}, err
}

// nothing: no rank writes anything.
func nothing(p, r int) (*shape, error) {
	ft, err := mpi.TypeContiguous(2, mpi.TypeInt())
	return &shape{disp: int64(8 * r), etype: mpi.TypeInt(), esize: 4, filetype: ft, off: 3}, err
}
