//go:build linux && cgo

package e2e

// A real disk-full test: the file lives on a small tmpfs that rank 0
// mounts for the test, partly filled by a ballast file, and every
// strategy writes more than fits. ENOSPC must reach every rank with the
// same error, what was reported written must be intact, and the file must
// stay usable (read back, close, reopen once space is freed, delete). The
// E10 cache's copy to the global file meets the same full file system.
// Where mounting is not permitted the test skips, saying why.
//
//	MPI_NP=4 go test -count=1 -p 1 -exec $PWD/scripts/mpiexec.sh -run TestDiskFull -v ./e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/collio/collio"
	"github.com/collio/collio/cache"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
	"github.com/collio/collio/internal/refmodel"
)

const (
	dfMountSize = 1 << 20   // the tmpfs
	dfFree      = 300 << 10 // what the ballast leaves free: about three calls
	dfBlock     = 3000      // data bytes of a rank per slot
	dfSlot      = 4096      // each rank's slot; 1096 bytes of each are a hole
	dfCalls     = 7         // the whole file (~700 KiB) fits once the ballast is gone
)

// mountSmall mounts a tmpfs of size bytes on a new directory under dir
// (rank 0 mounts; every rank must see it) and unmounts it when the test
// ends. It skips the test on every rank where mounting is not permitted or
// the ranks do not share the mount.
func mountSmall(t *testing.T, c comm.Comm, dir string, size int) string {
	t.Helper()
	mnt := filepath.Join(dir, "small")
	marker := filepath.Join(mnt, "marker")
	msg := ""
	skip := false
	if c.Rank() == 0 {
		if err := os.Mkdir(mnt, 0o755); err != nil {
			msg = err.Error()
		} else if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
			msg = fmt.Sprintf("mounting a %d-byte tmpfs on %s: %v", size, mnt, err)
			skip = errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
		} else if err := os.WriteFile(marker, []byte(mnt), 0o644); err != nil {
			msg = err.Error()
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	}
	all := gatherStrings(t, c, msg)
	if all[0] != "" {
		if skip || strings.Contains(all[0], "operation not permitted") || strings.Contains(all[0], "permission denied") {
			t.Skipf("cannot mount a size-limited tmpfs here (needs root or CAP_SYS_ADMIN): %s", all[0])
		}
		t.Fatalf("rank 0: %s", all[0])
	}
	// Every rank must see rank 0's tmpfs (ranks on other nodes would not).
	seen := int64(1)
	if b, err := os.ReadFile(marker); err != nil || string(b) != mnt {
		seen = 0
	}
	if n := sumInt64(t, c, seen); n != int64(c.Size()) {
		if c.Rank() == 0 {
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
		t.Skipf("only %d of %d ranks see the tmpfs that rank 0 mounted: the ranks do not share a node", n, c.Size())
	}
	together(t, c, c.Barrier(), "barrier")
	var err error
	if c.Rank() == 0 {
		err = os.Remove(marker)
	}
	together(t, c, err, "removing the marker")
	t.Cleanup(func() {
		if err := c.Barrier(); err != nil {
			t.Logf("not unmounting %s: %v", mnt, err)
			return
		}
		if c.Rank() == 0 {
			// A file left open (a descriptor collio leaked) makes this EBUSY.
			if err := unix.Unmount(mnt, 0); err != nil {
				t.Errorf("unmounting %s: %v (a file still open?)", mnt, err)
				unix.Unmount(mnt, unix.MNT_DETACH)
			}
		}
		c.Barrier()
	})
	return mnt
}

// diskFull is one run: p ranks, each writing dfCalls calls of per bytes
// through a view of dfBlock-byte pieces in dfSlot-byte slots, interleaved
// by rank, so that every call's range shares tiles with the previous
// call's (per is not a multiple of dfBlock) and read-modify-write windows
// of the failing call cover bytes of earlier calls.
type diskFull struct {
	t       *testing.T
	c       comm.Comm
	dir     string // an ordinary temporary directory
	mnt     string // the small tmpfs
	ballast string
	path    string
	per     int
	ft      *collio.Type
	data    [][]byte // this rank's data of each call
	want    []byte   // the whole file once every call is written
	callOf  []int    // for each byte of want, the call that writes it; -1 for holes
}

func newDiskFull(t *testing.T, c comm.Comm) *diskFull {
	t.Helper()
	p, r := c.Size(), c.Rank()
	d := &diskFull{t: t, c: c, dir: mpirunner.TempDir(t, c), per: 73000/p + 7}
	d.mnt = mountSmall(t, c, d.dir, dfMountSize)
	d.ballast = filepath.Join(d.mnt, "ballast")
	d.path = filepath.Join(d.mnt, "f")
	ft, err := collio.Resized(collio.Bytes(dfBlock), 0, int64(p*dfSlot))
	together(t, c, err, "filetype")
	d.ft = ft
	for k := range dfCalls {
		d.data = append(d.data, pattern(d.per, r, k+1))
	}
	// The reference: where each rank's bytes of each call go, expanded by
	// internal/refmodel, independently of the code under test.
	for q := range p {
		for k := range dfCalls {
			offs := refmodel.FileOffsets(refmodel.Access{Disp: int64(q * dfSlot), Filetype: ft, DataStart: int64(k * d.per), Size: int64(d.per)})
			src := pattern(d.per, q, k+1)
			for i, off := range offs {
				for int64(len(d.want)) <= off {
					d.want = append(d.want, 0)
					d.callOf = append(d.callOf, -1)
				}
				d.want[off], d.callOf[off] = src[i], k
			}
		}
	}
	if r == 0 {
		err = os.WriteFile(d.ballast, make([]byte, dfMountSize-dfFree), 0o644)
	}
	together(t, c, err, "writing the ballast")
	return d
}

// freeSpace removes the ballast.
func (d *diskFull) freeSpace() {
	var err error
	if d.c.Rank() == 0 {
		err = os.Remove(d.ballast)
	}
	together(d.t, d.c, err, "removing the ballast")
}

// check compares the file on disk (rank 0) with the reference: calls
// before done were reported written and must be exact; the bytes of calls
// in [done, upto) may be new or still zero (a failed call, or copies the
// cache did not finish); everything else must be zero, and the file may
// not extend past call upto-1 nor end before call done-1.
func (d *diskFull) check(what string, done, upto int) {
	t := d.t
	if d.c.Rank() == 0 {
		got, err := os.ReadFile(d.path)
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else {
			end := func(calls int) int { // the file size once calls [0, calls) are written
				n := 0
				for i, k := range d.callOf {
					if k >= 0 && k < calls {
						n = i + 1
					}
				}
				return n
			}
			if len(got) < end(done) || len(got) > end(upto) {
				t.Errorf("%s: file has %d bytes, want %d to %d", what, len(got), end(done), end(upto))
			}
			bad, landed, pending := 0, 0, 0
			for i, b := range got[:min(len(got), len(d.want))] {
				k := d.callOf[i]
				ok := false
				switch {
				case k >= 0 && k < done:
					ok = b == d.want[i]
				case k >= done && k < upto:
					ok = b == 0 || b == d.want[i]
					pending++
					if b != 0 {
						landed++
					}
				default:
					ok = b == 0
				}
				if !ok {
					if bad < 3 {
						t.Errorf("%s: byte %d (call %d) is %#x, want %#x", what, i, k, b, d.want[i])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d bytes wrong", what, bad)
			}
			t.Logf("%s: %d bytes on disk; calls 0..%d exact; %d of %d bytes of calls %d..%d landed",
				what, len(got), done-1, landed, pending, done, upto-1)
		}
	}
	checkpoint(t, d.c)
}

// checkWhole requires the file to equal the reference.
func (d *diskFull) checkWhole(what string) {
	if d.c.Rank() == 0 {
		got, err := os.ReadFile(d.path)
		if err != nil || !bytes.Equal(got, d.want) {
			d.t.Errorf("%s: %v %s", what, err, firstDiff(got, d.want))
		}
	}
	checkpoint(d.t, d.c)
}

// deleteFile deletes the file on rank 0 and checks it is gone.
func (d *diskFull) deleteFile() {
	var err error
	if d.c.Rank() == 0 {
		err = collio.Delete(d.path)
	}
	together(d.t, d.c, err, "delete")
	absent(d.t, d.c, d.path)
}

func (d *diskFull) open(mode collio.Mode, h collio.Hints) *collio.File {
	f, err := collio.Open(d.c, d.path, mode, h)
	together(d.t, d.c, err, "open")
	together(d.t, d.c, f.SetView(int64(d.c.Rank()*dfSlot), collio.Byte, d.ft, nil), "set_view")
	return f
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestDiskFull: every strategy, with each error agreement, writes calls
// until the tmpfs is full.
func TestDiskFull(t *testing.T) {
	strategies := []struct {
		name string
		h    collio.Hints
	}{
		{"twophase", collio.Hints{"collio_strategy": "twophase", "romio_cb_write": "enable", "cb_config_list": "*:*", "cb_buffer_size": "65536"}},
		{"dynamic", collio.Hints{"collio_strategy": "dynamic", "cb_config_list": "*:*", "cb_buffer_size": "65536"}},
		{"static", collio.Hints{"collio_strategy": "static", "cb_config_list": "*:*", "cb_buffer_size": "65536"}},
		{"tam", collio.Hints{"collio_strategy": "tam", "collio_node_size": "2", "cb_config_list": "*:*", "cb_buffer_size": "65536"}},
		{"independent", collio.Hints{"collio_strategy": "independent", "ind_wr_buffer_size": "32768"}},
		{"auto", collio.Hints{"collio_strategy": "auto", "cb_config_list": "*:*"}},
		{"auto-cb-disabled", collio.Hints{"romio_cb_write": "disable", "ind_wr_buffer_size": "32768"}},
	}
	for _, st := range strategies {
		for _, agreement := range []string{"deferred", "immediate"} {
			mpiRun(t, st.name+"/"+agreement, func(t *testing.T, c comm.Comm) {
				h := collio.Hints{"collio_error_agreement": agreement}
				for k, v := range st.h {
					h[k] = v
				}
				diskFullStrategy(t, c, h, agreement == "deferred")
			})
		}
	}
	for _, full := range []bool{false, true} {
		name := "e10-cache/space-freed-before-close"
		if full {
			name = "e10-cache/close-while-full"
		}
		mpiRun(t, name, func(t *testing.T, c comm.Comm) { diskFullCache(t, c, full) })
	}
}

func diskFullStrategy(t *testing.T, c comm.Comm, h collio.Hints, deferred bool) {
	d := newDiskFull(t, c)
	f := d.open(collio.ModeCreate|collio.ModeRdWr, h)
	failed := -1
	for k := range dfCalls {
		n, err := f.WriteAtAll(d.data[k], int64(k*d.per))
		if err == nil && n != d.per {
			t.Errorf("call %d: wrote %d bytes, want %d", k, n, d.per)
		}
		bad := sumInt64(t, c, boolInt(err != nil))
		if bad == 0 {
			continue
		}
		failed = k
		last, _ := f.Stats()
		indep := sumInt64(t, c, boolInt(last.Strategy == "independent"))
		if indep != 0 && indep != int64(c.Size()) {
			t.Errorf("call %d: only %d ranks ran the independent strategy", k, indep)
		}
		if deferred && indep != 0 {
			// Each rank did its own I/O and returned its own outcome; the
			// next synchronizing call reports the failure everywhere.
			if err != nil && !errors.Is(err, collio.ErrNoSpace) {
				t.Errorf("call %d: %v, want ErrNoSpace", k, err)
			}
			if err != nil && n != 0 {
				t.Errorf("call %d failed but reported %d bytes", k, n)
			}
			msg := expectError(t, c, f.Sync(), collio.ErrNoSpace, "sync after a deferred ENOSPC", true)
			if !strings.Contains(msg, "an earlier collective call failed") {
				t.Errorf("sync's error does not name the earlier call: %s", msg)
			}
		} else {
			if bad != int64(c.Size()) {
				t.Errorf("call %d (%s): only %d of %d ranks report an error", k, last.Strategy, bad, c.Size())
			}
			expectError(t, c, err, collio.ErrNoSpace, fmt.Sprintf("write_at_all call %d (%s)", k, last.Strategy), true)
			together(t, c, f.Sync(), "sync after an agreed error: nothing owed")
		}
		t.Logf("call %d of %d (%s) hit ENOSPC", k, dfCalls, last.Strategy)
		break
	}
	if failed < 1 {
		t.Errorf("ENOSPC came at call %d: want a call that fit before it (and one after)", failed)
	}
	checkpoint(t, c)

	// What was reported written reads back, through the same file.
	got := make([]byte, failed*d.per)
	n, err := f.ReadAtAll(got, 0)
	together(t, c, err, "read_at_all after ENOSPC")
	if want := bytes.Join(d.data[:failed], nil); n != len(want) || !bytes.Equal(got, want) {
		t.Errorf("rank %d reads back %d bytes: %s", c.Rank(), n, firstDiff(got[:n], want))
	}
	together(t, c, f.Close(), "close after ENOSPC")
	d.check("after ENOSPC", failed, failed+1)

	// With space again, the file takes the rest and is whole.
	d.freeSpace()
	f = d.open(collio.ModeRdWr, h)
	for k := failed; k < dfCalls; k++ {
		_, err := f.WriteAtAll(d.data[k], int64(k*d.per))
		together(t, c, err, "rewriting call %d with space freed", k)
	}
	together(t, c, f.Close(), "close")
	d.checkWhole("after rewriting with space")
	d.deleteFile()
}

// diskFullCache: the E10 cache (on an ordinary directory) takes every
// write; its copy to the global file on the full tmpfs fails, and Sync
// says so on every rank. Then either space is freed and Close completes
// the copy, or Close fails too, leaving the cache and its journal, and
// collio recover completes the file once space is freed.
func diskFullCache(t *testing.T, c comm.Comm, closeWhileFull bool) {
	d := newDiskFull(t, c)
	cacheDir := filepath.Join(d.dir, "cache")
	h := cachedHints(cacheDir, "cb_buffer_size", "65536")
	f := d.open(collio.ModeCreate|collio.ModeRdWr, h)
	accepted, seen := dfCalls, false
	for k := range dfCalls {
		_, err := f.WriteAtAll(d.data[k], int64(k*d.per))
		if sumInt64(t, c, boolInt(err != nil)) == 0 {
			continue
		}
		// A copy error may surface at a write; it is agreed like any other.
		expectError(t, c, err, collio.ErrNoSpace, fmt.Sprintf("cached write_at_all call %d", k), true)
		accepted, seen = k, true
		break
	}
	serr := f.Sync()
	if !seen {
		msg := expectError(t, c, serr, collio.ErrNoSpace, "sync of the cache's copies", true)
		if c.Rank() == 0 && !strings.Contains(msg, "copying bytes") {
			t.Errorf("sync error does not name the copy: %s", msg)
		}
	} else if all := gatherStrings(t, c, fmt.Sprint(serr)); c.Rank() == 0 && !allSame(all) {
		t.Errorf("sync after a failed cached write: ranks differ: %q", all)
	}
	checkpoint(t, c)
	upto := min(accepted+1, dfCalls)
	d.check("cache copies meeting ENOSPC", 0, upto)

	if !closeWhileFull {
		d.freeSpace()
		together(t, c, f.Close(), "close with space freed: the copies are retried")
	} else {
		expectError(t, c, f.Close(), collio.ErrNoSpace, "close while still full", true)
		d.check("after a failed close", 0, upto)
		if c.Rank() == 0 {
			if js, _ := filepath.Glob(filepath.Join(cacheDir, "*.journal")); len(js) == 0 {
				t.Errorf("no journal kept in %s after a failed close", cacheDir)
			}
		}
		checkpoint(t, c)
		d.freeSpace()
		var err error
		if c.Rank() == 0 {
			var rs []cache.Recovered
			rs, err = cache.Recover(cacheDir, cache.RecoverOptions{})
			for _, r := range rs {
				t.Logf("recover: %s: %s, %d bytes", filepath.Base(r.Journal), r.Status, r.Bytes)
			}
		}
		together(t, c, err, "collio recover with space freed")
	}
	if accepted == dfCalls {
		d.checkWhole("global file once the copies completed")
	} else {
		d.check("global file once the copies completed", accepted, upto)
	}
	if c.Rank() == 0 {
		if es, _ := os.ReadDir(cacheDir); len(es) != 0 {
			t.Errorf("%d files left in the cache directory", len(es))
		}
	}
	checkpoint(t, c)
	d.deleteFile()
}

func allSame(s []string) bool {
	for _, x := range s {
		if x != s[0] {
			return false
		}
	}
	return true
}
