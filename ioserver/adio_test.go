package ioserver_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/ioserver"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// TestFileThroughServers: 248 compute ranks and 8 servers in memory (the
// package's other tests run 1024 ranks; here adio's collective calls
// would dominate the time); a
// file opened on the compute communicator with an interleaved view is
// written collectively, then rewritten in part, read back collectively
// before close (from the servers' queues or the file), and after close is
// what independent writes in that order make.
func TestFileThroughServers(t *testing.T) {
	const ranks, servers, piece, count = 256, 8, 16, 4
	compute := ranks - servers
	path := filepath.Join(t.TempDir(), "f")
	data := func(r, salt int) []byte {
		b := make([]byte, piece*count)
		for i := range b {
			b[i] = byte(r*7 + i*3 + salt*101 + 1)
		}
		return b
	}
	want := make([]byte, compute*piece*count)
	for r := range compute {
		first, second := data(r, 0), data(r, 1)
		for k := range count {
			src := first
			if k == 1 {
				src = second // the rewrite of the second piece
			}
			copy(want[(k*compute+r)*piece:], src[k*piece:(k+1)*piece])
		}
	}
	err := comm.RunWorldTimeout(ranks, 32, 60*time.Second, func(w comm.Comm) error {
		c, err := ioserver.Split(w, servers, ioserver.Config{Buffer: 64 << 10})
		if err != nil || c == nil {
			return err
		}
		err = func() error {
			f, err := adio.Open(c, "ufs:"+path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{})
			if err != nil {
				return err
			}
			ft, err := layout.Vector(count, piece, piece*compute, layout.Byte)
			if err != nil {
				return err
			}
			r := c.Rank()
			if err := f.SetView(adio.View{Disp: int64(r * piece), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(data(r, 0)), 0); err != nil {
				return err
			}
			if _, err := f.WriteAtAll(adio.Bytes(data(r, 1)[piece:2*piece]), piece); err != nil {
				return err
			}
			got := make([]byte, piece*count)
			if _, err := f.ReadAtAll(adio.Bytes(got), 0); err != nil {
				return err
			}
			mine := data(r, 0)
			copy(mine[piece:], data(r, 1)[piece:2*piece])
			if !bytes.Equal(got, mine) {
				return fmt.Errorf("rank %d reads back other bytes than it wrote", r)
			}
			return f.Close()
		}()
		if serr := ioserver.Stop(c); err == nil {
			err = serr
		}
		return err
	})
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "file differs from independent writes")
}
