//go:build cgo

package e2e

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
)

// Nonblocking collective transfers, for every strategy and the E10 cache:
// 8 outstanding writes on 2 files with interleaved views (data crosses
// ranks), completed out of order by Wait, Test loops and WaitAll; reads
// of what they wrote; the files compared byte for byte with the expected
// bytes of every rank.
func TestNonblockingCollective(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		cacheDir := filepath.Join(dir, "cache")
		if r == 0 {
			os.MkdirAll(cacheDir, 0o755)
		}
		together(t, c, c.Barrier(), "barrier")
		variants := []struct {
			name  string
			hints collio.Hints
		}{
			{"auto", nil},
			{"twophase", collio.Hints{"collio_strategy": "twophase", "cb_nodes": "2", "cb_buffer_size": "256"}},
			{"dynamic", collio.Hints{"collio_strategy": "dynamic", "cb_nodes": "2", "cb_buffer_size": "256"}},
			{"static", collio.Hints{"collio_strategy": "static", "cb_nodes": "2", "cb_buffer_size": "256"}},
			{"tam", collio.Hints{"collio_strategy": "tam", "collio_node_size": "2", "cb_config_list": "*:1", "cb_buffer_size": "256"}},
			{"independent", collio.Hints{"romio_cb_write": "disable", "romio_cb_read": "disable"}},
			{"e10", collio.Hints{"collio_strategy": "twophase", "cb_nodes": "2", "e10_cache": "enable", "e10_cache_path": cacheDir}},
		}
		const block, ops = 100, 8
		n := 3*block + 17 // not a whole number of blocks
		ft, err := collio.Resized(collio.Bytes(block), 0, int64(p*block))
		together(t, c, err, "filetype")
		for _, v := range variants {
			h := collio.Hints{"collio_collective_timeout": "20"}
			for k, x := range v.hints {
				h[k] = x
			}
			var files [2]*collio.File
			for i := range files {
				f, err := collio.Open(c, filepath.Join(dir, fmt.Sprintf("%s-%d", v.name, i)), collio.ModeCreate|collio.ModeRdWr, h)
				together(t, c, err, "%s: open", v.name)
				if err != nil {
					return
				}
				together(t, c, f.SetView(int64(r*block), collio.Byte, ft, nil), "%s: set_view", v.name)
				files[i] = f
			}
			reqs := make([]*collio.Request, ops)
			for i := range ops {
				reqs[i], err = files[i%2].IWriteAtAll(pattern(n, r, i), int64(i/2*n))
				together(t, c, err, "%s: start write %d", v.name, i)
			}
			// Out of order: the last four by Wait, backwards; two by Test
			// loops; two by WaitAll.
			for i := ops - 1; i >= 4; i-- {
				got, err := reqs[i].Wait()
				together(t, c, err, "%s: wait %d", v.name, i)
				if got != int64(n) {
					t.Errorf("%s: write %d moved %d bytes, want %d", v.name, i, got, n)
				}
			}
			for _, i := range []int{1, 0} {
				for {
					done, _, err := reqs[i].Test()
					if done {
						together(t, c, err, "%s: test %d", v.name, i)
						break
					}
				}
			}
			together(t, c, collio.WaitAll(reqs[2], reqs[3]), "%s: waitall", v.name)
			if i, _, _ := collio.WaitAny(reqs[:4]...); i != -1 {
				t.Errorf("%s: WaitAny over completed requests gave %d", v.name, i)
			}

			reads := make([][]byte, ops)
			for i := range ops {
				reads[i] = make([]byte, n)
				reqs[i], err = files[i%2].IReadAtAll(reads[i], int64(i/2*n))
				together(t, c, err, "%s: start read %d", v.name, i)
			}
			// Half by WaitAny, in whatever order they complete.
			seen := map[int]bool{}
			for range ops / 2 {
				i, got, err := collio.WaitAny(reqs...)
				together(t, c, err, "%s: waitany", v.name)
				if i < 0 || seen[i] || got != int64(n) {
					t.Errorf("%s: WaitAny gave request %d (%d bytes) again or wrongly", v.name, i, got)
				}
				seen[i] = true
			}
			together(t, c, collio.WaitAll(reqs...), "%s: wait reads", v.name)
			for i := range ops {
				if !bytes.Equal(reads[i], pattern(n, r, i)) {
					t.Errorf("%s: read %d differs from what write %d wrote", v.name, i, i)
				}
			}
			for i, f := range files {
				together(t, c, f.Close(), "%s: close %d", v.name, i)
			}
			for i := range files {
				got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s-%d", v.name, i)))
				together(t, c, err, "%s: read file %d", v.name, i)
				want := nonblockingFile(p, block, n, ops, i)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: file %d: %s", v.name, i, firstDiff(got, want))
				}
			}
		}
	})
}

// nonblockingFile is file i of TestNonblockingCollective: every rank's
// writes i, i+2, ... through the interleaved view.
func nonblockingFile(p, block, n, ops, i int) []byte {
	var want []byte
	for r := range p {
		for k := i; k < ops; k += 2 {
			data := pattern(n, r, k)
			for d := range data {
				pos := k/2*n + d // data offset in the view
				off := r*block + pos/block*p*block + pos%block
				if off >= len(want) {
					want = append(want, make([]byte, off+1-len(want))...)
				}
				want[off] = data[d]
			}
		}
	}
	return want
}

// A failed nonblocking write reaches every rank at its Wait (strategies
// that move data agree at once), the file stays usable; closing with a
// transfer not waited for fails on every rank naming it, and closes.
func TestNonblockingErrorsAndClose(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		p, r := c.Size(), c.Rank()
		dir := mpirunner.TempDir(t, c)
		// Every rank's first write fails: whichever ranks aggregate.
		h := collio.Hints{"collio_strategy": "twophase", "cb_nodes": strconv.Itoa(p), "collio_fault": "eio_call=write:1",
			"collio_collective_timeout": "20"}
		f, err := collio.Open(c, "faulty:"+filepath.Join(dir, "fail"), collio.ModeCreate|collio.ModeRdWr, h)
		together(t, c, err, "open")
		if err != nil {
			return
		}
		req, err := f.IWriteAtAll(pattern(64, r, 1), int64(64*r))
		together(t, c, err, "start")
		_, err = req.Wait()
		expectError(t, c, err, collio.ErrIO, "wait for the failed write", true)
		req, err = f.IWriteAtAll(pattern(64, r, 2), int64(64*r))
		together(t, c, err, "start again")
		_, err = req.Wait()
		together(t, c, err, "the next write")
		together(t, c, f.Close(), "close")

		f, err = collio.Open(c, filepath.Join(dir, "open"), collio.ModeCreate|collio.ModeRdWr, nil)
		together(t, c, err, "open")
		if err != nil {
			return
		}
		req, err = f.IWriteAtAll(pattern(64, r, 3), int64(64*r))
		together(t, c, err, "start")
		msg := expectError(t, c, f.Close(), collio.ErrFileInUse, "close with a write not waited for", true)
		if !strings.Contains(msg, "iwrite_at_all") {
			t.Errorf("close error %q does not name the operation", msg)
		}
		_, err = req.Wait()
		together(t, c, err, "wait after close")
		got, err := os.ReadFile(filepath.Join(dir, "open"))
		together(t, c, err, "read the file")
		if len(got) < 64*(r+1) || !bytes.Equal(got[64*r:64*(r+1)], pattern(64, r, 3)) {
			t.Errorf("the write not waited for did not land")
		}
	})
}
