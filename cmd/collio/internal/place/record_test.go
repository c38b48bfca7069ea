package place

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/record"
	"github.com/stretchr/testify/require"

	_ "github.com/collio/collio/driver/ufs"
	// The strategies, registered as collio has them.
	_ "github.com/collio/collio/independent"
	_ "github.com/collio/collio/segment"
	_ "github.com/collio/collio/tam"
	_ "github.com/collio/collio/twophase"
)

// A collective write recorded with COLLIO_RECORD gives the same
// application matrix as the grid it came from.
func TestRecordedCallGivesTheGridMatrix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "grid.dat")
	g := Grid{Sizes: []int{8, 12}, Procs: []int{2, 3}, Elem: 4, Order: []int{5, 0, 3, 1, 4, 2}}
	want, err := g.Accesses()
	require.NoError(t, err)
	getenv := func(k string) string {
		if k == "COLLIO_RECORD" {
			return dir
		}
		return ""
	}
	err = comm.RunWorldTimeout(6, 0, time.Minute, func(c comm.Comm) error {
		f, err := adio.Open(c, path, adio.ModeCreate|adio.ModeRdWr, adio.OpenOptions{Getenv: getenv})
		if err != nil {
			return err
		}
		a := want[c.Rank()]
		if err := f.SetView(adio.View{Etype: layout.Int32, Filetype: a.Filetype}, nil); err != nil {
			return err
		}
		buf := bytes.Repeat([]byte{byte(c.Rank())}, int(a.Size))
		for range 2 { // the second call starts at the view's same first byte
			if _, err := f.WriteAtAll(adio.Access{Buf: buf, Count: a.Size}, 0); err != nil {
				return err
			}
		}
		if _, err := f.WriteAtAll(adio.Access{Buf: buf[:8], Count: 8}, 3); err != nil {
			return err
		}
		return f.Close()
	})
	require.NoError(t, err)
	calls, err := record.ReadCall(dir, "grid.dat", 2)
	require.NoError(t, err)
	third, err := record.ReadCall(dir, "grid.dat", 3)
	require.NoError(t, err)
	for r, c := range third {
		require.Equal(t, "write_at_all", c.Op)
		require.Equal(t, int64(12), c.Start, "rank %d: 3 int32 into the view", r)
		require.Equal(t, int64(8), c.Bytes)
	}
	got, err := FromRecord(calls)
	require.NoError(t, err)
	for _, naggs := range []int{2, 3, 5} {
		mw, err := Build(want, naggs, Domains{})
		require.NoError(t, err)
		mg, err := Build(got, naggs, Domains{})
		require.NoError(t, err)
		require.Equal(t, mw, mg, "%d aggregators", naggs)
	}
}

// DataStart moves an access within its view.
func TestAccessDataStart(t *testing.T) {
	vec, err := layout.Vector(8, 1, 4, layout.Bytes(2)) // 2 bytes every 8
	require.NoError(t, err)
	a := Access{Disp: 100, Filetype: vec, DataStart: 4, Size: 6}
	r, err := a.Range()
	require.NoError(t, err)
	require.Equal(t, int64(116), r.Start) // data byte 4 is the first of block 2
	require.Equal(t, int64(134), r.End)   // data byte 9 is the second of block 4
	m, err := Build([]Access{a}, 1, Domains{})
	require.NoError(t, err)
	require.Equal(t, int64(6), m.Total())
}
