//go:build cgo

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// TestSievingConcurrentWriters: with data sieving, a rank's
// read-modify-write of a window with holes must not undo what another
// rank writes into those holes meanwhile (MPI guarantees that
// nonoverlapping writes by different ranks all persist, atomic mode or
// not). Rank 0 writes 16 bytes at 16 of every 64-byte tile (each window is
// hole-free); rank 1 writes bytes 0..8 and 40..48 (its windows have holes
// that cover rank 0's bytes). Every iteration writes new values, so an
// update lost to a stale read-modify-write shows up in the file.
func TestSievingConcurrentWriters(t *testing.T) {
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		if c.Size() < 2 {
			t.Skip("needs 2 ranks")
		}
		const tile, tiles, iterations = 64, 2048, 60
		r := c.Rank()
		tiled := func(blocklens []int, displs []int64) (*collio.Type, error) {
			hi, err := collio.HIndexed(blocklens, displs, collio.Byte)
			if err != nil {
				return nil, err
			}
			return collio.Resized(hi, 0, tile)
		}
		var ft *collio.Type
		var err error
		switch r {
		case 0:
			ft, err = tiled([]int{16}, []int64{16})
		case 1:
			ft, err = tiled([]int{8, 8}, []int64{0, 40})
		default:
			ft, err = collio.Contiguous(1, collio.Byte) // writes nothing
		}
		together(t, c, err, "building the view")
		path := filepath.Join(mpirunner.TempDir(t, c), "race")
		// Rank 0 sieves in 64-byte windows, so each of its windows holds one
		// piece and no hole; rank 1 in one window over the whole range.
		// (ind_wr_buffer_size need not agree between ranks.)
		buf := "64"
		if r != 0 {
			buf = "1048576"
		}
		f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr,
			collio.Hints{"romio_ds_write": "enable", "ind_wr_buffer_size": buf})
		together(t, c, err, "open")
		closed := false
		t.Cleanup(func() {
			if !closed {
				f.Close()
			}
		})
		together(t, c, f.SetView(0, collio.Byte, ft, nil), "set_view")
		lost := 0
		for it := range iterations {
			var data []byte
			switch r {
			case 0:
				data = pattern(16*tiles, 0, it)
			case 1:
				data = pattern(16*tiles, 1, it)
			}
			_, err := f.WriteAt(data, 0)
			together(t, c, err, "iteration %d: write_at", it)
			together(t, c, c.Barrier(), "barrier")
			if r == 0 {
				file, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("iteration %d: %v", it, err)
				}
				want0, want1 := pattern(16*tiles, 0, it), pattern(16*tiles, 1, it)
				for k := range tiles {
					if len(file) < (k+1)*tile-16 {
						lost += 2
						continue
					}
					at := file[k*tile:]
					if !bytes.Equal(at[16:32], want0[16*k:16*k+16]) {
						lost++
					}
					if !bytes.Equal(at[0:8], want1[16*k:16*k+8]) || !bytes.Equal(at[40:48], want1[16*k+8:16*k+16]) {
						lost++
					}
				}
			}
			checkpoint(t, c)
		}
		closed = true
		together(t, c, f.Close(), "close")
		if r == 0 {
			assert.Zero(t, lost, "blocks lost to concurrent read-modify-write in %d iterations of %d tiles", iterations, tiles)
		}
	})
}
