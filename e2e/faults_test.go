//go:build cgo

package e2e

// A fault on one rank (collio_fault_ranks) in the middle of a collective
// write or read, under mpirun, for every strategy that moves data between
// ranks. adio's in-memory tests cover the same rules with goroutines as
// ranks; here each rank is a process and the messages are MPI's, so a
// rank that leaves a round early, or a rank left waiting in a collective,
// shows up as a different error or a hang.
//
//	MPI_NP=4 go test -count=1 -p 1 -exec $PWD/scripts/mpiexec.sh -run TestFault -v ./e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
	"github.com/collio/collio/internal/refmodel"
)

const (
	fltPiece  = 100      // data bytes of a rank per slot
	fltSlot   = 128      // each rank's slot: the last 28 bytes are a hole
	fltPer    = 96 * 100 // bytes each rank moves in the call
	fltWindow = "8192"   // cb_buffer_size: several rounds per aggregator
	fltOld    = 0.6      // the file before the write: this share of the call's range
	fltSalt   = 5        // salt of the new data
	fltTO     = "20"     // collio_collective_timeout: mismatched ranks fail instead of waiting
)

// faultStrategies are the strategies that move data between ranks; every
// rank is an aggregator (cb_config_list=*:*, cb_nodes = every rank), so
// the faulty rank does file I/O whichever it is.
func faultStrategies(p int) []struct {
	name string
	h    collio.Hints
} {
	all := strconv.Itoa(p)
	return []struct {
		name string
		h    collio.Hints
	}{
		{"twophase", cbHints("cb_nodes", all, "cb_buffer_size", fltWindow)},
		{"dynamic", cbHints("collio_strategy", "dynamic", "cb_nodes", all, "cb_buffer_size", fltWindow)},
		{"static", cbHints("collio_strategy", "static", "cb_nodes", all, "cb_buffer_size", fltWindow)},
		{"tam", cbHints("collio_strategy", "tam", "collio_node_size", "2", "cb_nodes", all, "cb_buffer_size", fltWindow)},
		// Each round's file I/O after its exchange, not overlapping the next.
		{"twophase-no-overlap", cbHints("cb_nodes", all, "cb_buffer_size", fltWindow, "collio_overlap", "disable")},
	}
}

// faultCase is one strategy and one fault on one rank.
type faultCase struct {
	t      *testing.T
	c      comm.Comm
	path   string // the file (without the faulty: prefix)
	h      collio.Hints
	ft     *collio.Type
	old    []byte // the file before the faulty call
	want   []byte // the file once the call succeeds
	writes []bool // the bytes the call writes
	mine   []byte // the bytes of old under this rank's view: what its read returns
}

// newFaultCase builds the file before the call (rank 0 writes old) and
// the reference: rank q's call moves fltPer bytes through a view of
// fltPiece-byte pieces in fltSlot-byte slots interleaved by rank.
func newFaultCase(t *testing.T, c comm.Comm, h collio.Hints, oldShare float64) *faultCase {
	p, r := c.Size(), c.Rank()
	fc := &faultCase{t: t, c: c, path: filepath.Join(mpirunner.TempDir(t, c), "f"), h: h}
	ft, err := collio.Resized(collio.Bytes(fltPiece), 0, int64(p*fltSlot))
	together(t, c, err, "filetype")
	fc.ft = ft
	end := (fltPer/fltPiece-1)*p*fltSlot + (p-1)*fltSlot + fltPiece // the call's range ends here
	fc.old = pattern(int(float64(end)*oldShare), 9, 9)
	fc.want = append([]byte(nil), fc.old...)
	for q := range p {
		offs := refmodel.FileOffsets(refmodel.Access{Disp: int64(q * fltSlot), Filetype: ft, Size: fltPer})
		src := pattern(fltPer, q, fltSalt)
		for i, off := range offs {
			for int64(len(fc.want)) <= off {
				fc.want = append(fc.want, 0)
			}
			for int64(len(fc.writes)) <= off {
				fc.writes = append(fc.writes, false)
			}
			fc.want[off], fc.writes[off] = src[i], true
			if q == r {
				fc.mine = append(fc.mine, fc.at(off))
			}
		}
	}
	if len(fc.want) != end {
		t.Fatalf("reference ends at %d, want %d", len(fc.want), end)
	}
	seed(t, c, fc.path, fc.old)
	return fc
}

// at is byte off of the file before the call: a hole reads as zero.
func (fc *faultCase) at(off int64) byte {
	if off < int64(len(fc.old)) {
		return fc.old[off]
	}
	return 0
}

func (fc *faultCase) open(path string, extra collio.Hints) *collio.File {
	h := collio.Hints{"collio_collective_timeout": fltTO}
	for k, v := range fc.h {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	f, err := collio.Open(fc.c, path, collio.ModeRdWr, h)
	together(fc.t, fc.c, err, "open %s", path)
	together(fc.t, fc.c, f.SetView(int64(fc.c.Rank()*fltSlot), collio.Byte, fc.ft, nil), "set_view")
	return f
}

// checkFailedWrite checks the file after a write that failed: each byte
// is what the file held before the call or, where the call writes it, the
// call's new byte; nothing else (no stale window of another round, no
// garbage, no zeros over old data). The file is at least as long as
// before and no longer than the end of the call. It returns how many of
// the call's bytes landed.
func (fc *faultCase) checkFailedWrite(what string) int {
	t := fc.t
	landed := 0
	if fc.c.Rank() == 0 {
		got, err := os.ReadFile(fc.path)
		if err != nil {
			t.Errorf("%s: %v", what, err) // the other ranks stop at the checkpoint
		}
		if len(got) < len(fc.old) || len(got) > max(len(fc.old), len(fc.want)) {
			t.Errorf("%s: file has %d bytes, want %d to %d", what, len(got), len(fc.old), max(len(fc.old), len(fc.want)))
		}
		bad := 0
		for i, b := range got[:min(len(got), len(fc.want))] {
			switch {
			case b == fc.at(int64(i)):
			case fc.writes[i] && b == fc.want[i]:
				landed++
			default:
				if bad < 3 {
					t.Errorf("%s: byte %d is %#x: neither the old %#x nor the call's %#x (written by the call: %v)",
						what, i, b, fc.at(int64(i)), fc.want[i], fc.writes[i])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d bytes neither old nor new", what, bad)
		}
	}
	checkpoint(t, fc.c)
	return landed
}

// checkWhole requires the file to be want.
func (fc *faultCase) checkWhole(what string, want []byte) {
	if fc.c.Rank() == 0 {
		got, err := os.ReadFile(fc.path)
		if err != nil || !bytes.Equal(got, want) {
			fc.t.Errorf("%s: %v %s", what, err, firstDiff(got, want))
		}
	}
	checkpoint(fc.t, fc.c)
}

// writeFault is a fault of a collective write.
type writeFault struct {
	rule  string
	class error
	again bool // the rule fires once: the same handle can write again
	rmw   bool // the read of a read-modify-write (two-phase and TAM fill holes; segmentation never)
}

// TestFaultOnOneRankUnderMPI: for two-phase (with and without overlap),
// dynamic, static and TAM, one rank's file system fails in the middle of
// a collective write (EIO on its second write, on every write, on its
// third call of any kind; a short second write; ENOSPC part way; EIO on
// the read of a read-modify-write) or read (EIO on its second read). Every
// rank returns the same error, class and text, from that call, none
// reports bytes moved, and nothing hangs (collio_collective_timeout turns
// a rank that waits for a call the others left into an error; mpirunner
// aborts a rank stuck in MPI). After a failed write every byte of the
// file is either what it held before the call or the call's new byte
// there; after a failed read the file is unchanged. Then the file is
// whole again: the same handle rewrites (or rereads) it and gets the
// reference.
func TestFaultOnOneRankUnderMPI(t *testing.T) {
	p := mpirunner.Size()
	// The lowest failing rank's error is the one every rank returns: the
	// faulty rank is first once and last once.
	bads := []string{"0"}
	if p > 1 {
		bads = append(bads, strconv.Itoa(p-1))
	}
	writeFaults := []writeFault{
		{"eio_call=write:2", collio.ErrIO, true, false},
		{"short_write=2", collio.ErrIO, true, false},
		{"enospc_after=3000", collio.ErrNoSpace, false, false},
		{"eio_call=read:1", collio.ErrIO, true, true},
		{"eio_call=write:1+", collio.ErrIO, false, false}, // every later round fails too
		{"eio_call=*:3", collio.ErrIO, true, false},
	}
	for _, st := range faultStrategies(p) {
		for _, bad := range bads {
			for _, wf := range writeFaults {
				faultyWrite(t, st.name, st.h, bad, wf)
			}
			faultyRead(t, st.name, st.h, bad)
		}
	}
}

// checkStrategyName checks that the call ran the strategy named (up to
// a "-variant" suffix).
func checkStrategyName(t *testing.T, f *collio.File, name string) {
	want, _, _ := strings.Cut(name, "-")
	if last, _ := f.Stats(); last.Strategy != want {
		t.Errorf("strategy %s, want %s", last.Strategy, want)
	}
}

// faultyWrite: a collective write with fault wf on rank bad.
func faultyWrite(t *testing.T, strategy string, sh collio.Hints, bad string, wf writeFault) {
	extra := collio.Hints{"collio_fault": wf.rule, "collio_fault_ranks": bad}
	if wf.rmw {
		if strategy == "dynamic" || strategy == "static" {
			return
		}
		extra["romio_ds_write"] = "enable"
	}
	mpiRun(t, fmt.Sprintf("write/%s/rank%s/%s", strategy, bad, wf.rule), func(t *testing.T, c comm.Comm) {
		// Holes past the end of the file need no read: the file covers
		// the call's range where the fault is the read's.
		fc := newFaultCase(t, c, sh, map[bool]float64{false: fltOld, true: 1}[wf.rmw])
		f := fc.open("faulty:"+fc.path, extra)
		n, err := f.WriteAtAll(pattern(fltPer, c.Rank(), fltSalt), 0)
		if err != nil && n != 0 {
			t.Errorf("rank %d: the failed write reports %d bytes written", c.Rank(), n)
		}
		expectError(t, c, err, wf.class, "write_at_all with "+wf.rule+" on rank "+bad, true)
		checkStrategyName(t, f, strategy)
		landed := fc.checkFailedWrite("after the failed write")
		t.Logf("%d of the call's bytes landed before the fault", landed)
		if wf.again {
			_, err = f.WriteAtAll(pattern(fltPer, c.Rank(), fltSalt), 0)
			together(t, c, err, "write_at_all again")
		}
		together(t, c, f.Close(), "close")
		if wf.again {
			fc.checkWhole("after writing again", fc.want)
		}
	})
}

// faultyRead: a collective read with EIO on rank bad's second read.
func faultyRead(t *testing.T, strategy string, sh collio.Hints, bad string) {
	mpiRun(t, fmt.Sprintf("read/%s/rank%s/eio_call=read:2", strategy, bad), func(t *testing.T, c comm.Comm) {
		fc := newFaultCase(t, c, sh, 1.0)
		f := fc.open("faulty:"+fc.path, collio.Hints{"collio_fault": "eio_call=read:2", "collio_fault_ranks": bad})
		got := make([]byte, fltPer)
		n, err := f.ReadAtAll(got, 0)
		if err != nil && n != 0 {
			t.Errorf("rank %d: the failed read reports %d bytes read", c.Rank(), n)
		}
		expectError(t, c, err, collio.ErrIO, "read_at_all with eio_call=read:2 on rank "+bad, true)
		checkStrategyName(t, f, strategy)
		clear(got)
		n, err = f.ReadAtAll(got, 0)
		together(t, c, err, "read_at_all again")
		if n != fltPer || !bytes.Equal(got, fc.mine) {
			t.Errorf("rank %d reads %d bytes: %s", c.Rank(), n, firstDiff(got[:n], fc.mine))
		}
		together(t, c, f.Close(), "close")
		fc.checkWhole("after the failed read", fc.old)
	})
}
