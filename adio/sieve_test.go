package adio

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
)

// batches feeds pieces of size n every stride bytes to a sieving batcher
// and returns the number of pieces in each batch it flushes.
func batches(b *batcher, count int, n, stride int64) []int {
	var got []int
	flush := func() error {
		got = append(got, len(b.pieces))
		b.reset()
		return nil
	}
	for i := range int64(count) {
		b.add(piece{mem: i * n, file: i * stride, n: n}, flush)
	}
	flush()
	return got
}

// With automatic sieving small pieces share a window, large ones go alone
// (no hole is read or written around them); with sieving enabled they
// share windows whatever their size; contiguous pieces always join.
func TestSievingBatches(t *testing.T) {
	auto := func() *batcher { return &batcher{sieve: true, autoSieve: true, bufSize: 1 << 20} }
	require.Equal(t, []int{8}, batches(auto(), 8, 1<<10, 4<<10), "small pieces: one window")
	require.Equal(t, []int{1, 1, 1, 1}, batches(auto(), 4, 64<<10, 128<<10), "large pieces: one each")
	require.Equal(t, []int{8}, batches(auto(), 8, 64<<10, 64<<10), "contiguous large pieces: one run")
	enabled := &batcher{sieve: true, bufSize: 1 << 20}
	require.Equal(t, []int{4}, batches(enabled, 4, 64<<10, 128<<10), "romio_ds_read=enable sieves them")
	off := &batcher{bufSize: 1 << 20}
	require.Equal(t, []int{1, 1, 1}, batches(off, 3, 1<<10, 4<<10), "no sieving: runs only")
	reads := func() *batcher {
		return &batcher{sieve: true, autoSieve: true, maxHole: sieveMaxReadHole, bufSize: 1 << 20}
	}
	require.Equal(t, []int{1, 1, 1, 1}, batches(reads(), 4, 20<<10, 40<<10), "reads: holes of 20 KiB read apart")
	require.Equal(t, []int{6}, batches(reads(), 6, 1250, 2500), "reads: small holes sieved")
	require.Equal(t, []int{2}, batches(auto(), 2, 20<<10, 40<<10), "writes keep sieving large holes")
}

// Pieces moved straight between the caller's buffer and the file (no
// sieving) cost no allocation each: their buffer lists are copied into
// storage reused from batch to batch. 20,000 pieces with holes between
// them, written and read back through a vector view, checked.
func TestPiecesMoveWithoutAllocatingEach(t *testing.T) {
	const pieces, n = 20000, 24
	ft, err := layout.Resized(layout.Bytes(n), 0, 3*n)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "f")
	world(t, 1, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{
			"collio_strategy": "independent", "romio_ds_write": "disable", "romio_ds_read": "disable"}})
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.SetView(View{Etype: layout.Byte, Filetype: ft}, nil); err != nil {
			return err
		}
		data := rankData(1, pieces*n)
		got := make([]byte, len(data))
		var werr, rerr error
		allocs := testing.AllocsPerRun(3, func() {
			_, werr = f.WriteAtAll(Bytes(data), 0)
			_, rerr = f.ReadAtAll(Bytes(got), 0)
		})
		switch {
		case werr != nil:
			return werr
		case rerr != nil:
			return rerr
		case !bytes.Equal(data, got):
			return errors.New("the data read differs from the data written")
		case allocs >= pieces/20:
			return fmt.Errorf("%.0f allocations for a write and a read of %d pieces", allocs, pieces)
		}
		return nil
	})
}
