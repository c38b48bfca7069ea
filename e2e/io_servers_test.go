//go:build cgo

package e2e

// I/O server ranks under MPI: with 1 and 2 servers (np 4 and 3 leave 3, 2
// or 1 compute ranks), files written through the servers are byte for byte
// the host MPI-IO's for every view shape, with and without the E10 cache
// under the servers; reads see queued data; overlapping rewrites end with
// the newest bytes; a server's write error reaches every compute rank at
// sync and close; a server buffer smaller than one rank's write passes it
// in pieces.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// serverVariants are the writes of TestIOServersUnderMPI's view shapes.
var serverVariants = []writeVariant{
	{name: "srv-indep", mode: collio.ModeCreate | collio.ModeWrOnly, servers: true},
	{name: "srv-coll", mode: collio.ModeCreate | collio.ModeRdWr, collective: true, strategy: stratIndependent, readBack: true, servers: true},
	{name: "srv-2w", mode: collio.ModeCreate | collio.ModeWrOnly, twoWrites: true, servers: true},
	{name: "srv-e10", mode: collio.ModeCreate | collio.ModeRdWr, collective: true, readBack: true, servers: true,
		hints: collio.Hints{"e10_cache": "enable", "e10_cache_flush_flag": "flush_onclose"}},
}

var serverReads = []readVariant{
	{file: "srv-indep"},
	{file: "host", collective: true},
	{file: "srv-2w", hints: collio.Hints{"romio_ds_read": "enable", "ind_rd_buffer_size": "64"}},
}

func TestIOServersUnderMPI(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, w comm.Comm) {
		for _, servers := range []int{1, 2} {
			if servers < w.Size() {
				withServers(t, w, servers)
			}
			checkpoint(t, w)
		}
	})
}

// withServers runs every case on the compute ranks of w with servers I/O
// servers; the first has a server buffer of 4 KiB, smaller than most
// ranks' writes.
func withServers(t *testing.T, w comm.Comm, servers int) {
	h := collio.Hints{}
	if servers == 1 {
		h["collio_io_server_buffer"] = "4k"
	}
	c, err := collio.SplitIOServers(w, servers, h)
	if err != nil {
		t.Errorf("SplitIOServers(%d): %v", servers, err)
		return
	}
	if c == nil {
		return // a server rank, stopped
	}
	// A subtest, so that a failure stops the compute ranks here and they
	// stop the servers, then meet the server ranks again.
	t.Run(fmt.Sprintf("servers%d", servers), func(t *testing.T) {
		defer func() {
			if err := collio.StopIOServers(c); err != nil {
				t.Errorf("StopIOServers: %v", err)
			}
		}()
		computeCases(t, c, w.Size()-servers)
	})
}

func computeCases(t *testing.T, c comm.Comm, size int) {
	if c.Size() != size {
		t.Errorf("compute communicator of %d ranks, want %d", c.Size(), size)
	}
	for _, sc := range shapeCases {
		t.Run(sc.name, func(t *testing.T) { runShapeWith(t, c, sc, serverVariants, serverReads) })
		checkpoint(t, c)
	}
	dir := mpirunner.TempDir(t, c)
	serverRewrites(t, c, filepath.Join(dir, "rewrites"))
	serverWriteError(t, c, filepath.Join(dir, "eio"))
	serverBigWrite(t, c, filepath.Join(dir, "big"))
}

// serverRewrites: each rank writes its block and reads it back at once
// (the bytes are likely still queued at a server), rewrites part of it,
// and after a barrier overwrites the start of its neighbour's block.
func serverRewrites(t *testing.T, c comm.Comm, path string) {
	const block = 64 << 10
	p, r := c.Size(), c.Rank()
	want := make([]byte, p*block)
	for k := range p {
		copy(want[k*block:], pattern(block, k, 0))
		copy(want[k*block+500:], pattern(300, k, 1))
	}
	for k := range p {
		copy(want[((k+1)%p)*block+100:], pattern(1000, k, 2))
	}
	f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, nil)
	together(t, c, err, "rewrites: open")
	_, err = f.WriteAt(pattern(block, r, 0), int64(r*block))
	if err == nil {
		_, err = f.WriteAt(pattern(300, r, 1), int64(r*block+500))
	}
	got := make([]byte, block)
	if err == nil {
		_, err = f.ReadAt(got, int64(r*block))
	}
	own := pattern(block, r, 0)
	copy(own[500:], pattern(300, r, 1))
	if err == nil && !bytes.Equal(got, own) {
		err = errors.New("reading back queued writes: " + firstDiff(got, own))
	}
	together(t, c, err, "rewrites: write and read back")
	together(t, c, c.Barrier(), "barrier")
	_, err = f.WriteAtAll(pattern(1000, r, 2), int64(((r+1)%p)*block+100))
	together(t, c, err, "rewrites: overwriting the neighbour")
	together(t, c, f.Close(), "rewrites: close")
	if r == 0 {
		file, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(file, want) {
			t.Errorf("rewrites: file differs from the writes in order: %v %s", err, firstDiff(file, want))
		}
	}
	checkpoint(t, c)
}

// serverWriteError: the servers' file fails writes touching byte 100
// (faulty driver); every compute rank gets the EIO from Sync and Close.
func serverWriteError(t *testing.T, c comm.Comm, path string) {
	f, err := collio.Open(c, "faulty:"+path, collio.ModeCreate|collio.ModeWrOnly, collio.Hints{"collio_fault": "eio_offset=100"})
	together(t, c, err, "eio: open")
	_, err = f.WriteAt(pattern(4096, c.Rank(), 3), int64(c.Rank()*4096))
	together(t, c, err, "eio: handing the write over")
	expectError(t, c, f.Sync(), collio.ErrIO, "eio: sync", true)
	expectError(t, c, f.Close(), collio.ErrIO, "eio: close", true)
	checkpoint(t, c)
}

// serverBigWrite: each rank writes 1 MiB in one call, collectively, more
// than a 4 KiB server buffer holds.
func serverBigWrite(t *testing.T, c comm.Comm, path string) {
	const n = 1 << 20
	f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeWrOnly, nil)
	together(t, c, err, "big: open")
	_, err = f.WriteAtAll(pattern(n, c.Rank(), 4), int64(c.Rank()*n))
	together(t, c, errors.Join(err, f.Close()), "big: write and close")
	if c.Rank() == 0 {
		file, err := os.ReadFile(path)
		var want []byte
		for k := range c.Size() {
			want = append(want, pattern(n, k, 4)...)
		}
		if err != nil || !bytes.Equal(file, want) {
			t.Errorf("big: file differs: %v %s", err, firstDiff(file, want))
		}
	}
	checkpoint(t, c)
}
