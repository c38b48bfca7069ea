package adio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/commpool"
	"github.com/collio/collio/layout"
)

// poolComm gives an in-memory rank a pool of private duplicates, as the
// MPI binding's communicators have (commpool.Keeper).
type poolComm struct {
	comm.Comm
	pool *commpool.Pool
}

func (c poolComm) Pool() *commpool.Pool { return c.pool }

// A file opened after another on the same communicator, with the same
// hints, starts from what the first one measured: no trial calls again,
// every rank alike. One with other agreed hints, or on a communicator
// that keeps nothing, starts over. The bytes are the table's.
func TestMeasuredChoiceOutlivesItsFile(t *testing.T) {
	const calls, records = 12, 8
	ft := must(layout.Resized(layout.Bytes(4), 0, 16))
	base := map[string]string{"collio_node_size": "1"}
	other := map[string]string{"collio_node_size": "1", "cb_buffer_size": "1m"}
	// run opens the files in turn on each rank's communicator, with or
	// without a pool, and returns each file's reasons per rank and bytes.
	run := func(pooled bool, files []map[string]string) ([][][]string, [][]byte) {
		reasons := make([][][]string, len(files))
		for i := range reasons {
			reasons[i] = make([][]string, 4)
		}
		paths := make([]string, len(files))
		for i := range files {
			paths[i] = tempPath(t, fmt.Sprint("outlive", pooled, i))
		}
		world(t, 4, func(c comm.Comm) error {
			r := c.Rank()
			if pooled {
				pool := &commpool.Pool{}
				defer pool.Release(true)
				c = poolComm{Comm: c, pool: pool}
			}
			for i, h := range files {
				f, err := Open(c, paths[i], ModeCreate|ModeRdWr, OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				if err := f.SetView(View{Disp: int64(4 * r), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
					return err
				}
				for k := range calls {
					if _, err := f.WriteAtAll(Bytes(rankData(r+4*k, 4*records)), int64(k*4*records)); err != nil {
						return fmt.Errorf("file %d, write %d: %w", i, k, err)
					}
					last, _ := f.Stats()
					reasons[i][r] = append(reasons[i][r], last.Reason)
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			return nil
		})
		bytes := make([][]byte, len(files))
		for i, p := range paths {
			bytes[i] = readFile(t, p)
		}
		return reasons, bytes
	}
	tried := func(reasons []string) bool {
		for _, r := range reasons {
			if strings.Contains(r, "measured choice: trying") && !strings.Contains(r, " again ") {
				return true
			}
		}
		return false
	}

	reasons, got := run(true, []map[string]string{base, base, other})
	for i := range reasons {
		for r := range 4 {
			require.Equal(t, reasons[i][0], reasons[i][r], "file %d: rank %d chose otherwise", i, r)
		}
	}
	require.True(t, tried(reasons[0][0]), "the first file tries the candidates: %q", reasons[0][0])
	require.False(t, tried(reasons[1][0]), "the second file starts from the first's figures: %q", reasons[1][0])
	require.Contains(t, reasons[1][0][0], "the fastest of")
	require.True(t, tried(reasons[2][0]), "other agreed hints start over: %q", reasons[2][0])

	reasons, _ = run(false, []map[string]string{base, base})
	require.True(t, tried(reasons[1][0]), "nothing kept without a pool: %q", reasons[1][0])

	_, table := run(true, []map[string]string{
		{"collio_node_size": "1", "collio_measure": "disable"},
		{"collio_node_size": "1", "collio_measure": "disable"},
	})
	require.Equal(t, table[0], got[0])
	require.Equal(t, table[1], got[1])
}
