//go:build cgo

package e2e

// The measured choice under mpirun: the strategies it tries and keeps
// are the same on every rank, call by call, and the file is the same as
// with the table alone.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// TestMeasuredChoiceSameOnEveryRank writes and reads 40 interleaved
// collective calls (every rank a 4-byte record per 16·np-byte tile: the
// table weighs collective buffering against independent I/O there), once
// measured and once with collio_measure=disable. Each rank's strategy per
// call, gathered on every rank, must be one sequence; the measured run
// must try more than one strategy (the trials), and both files be equal.
func TestMeasuredChoiceSameOnEveryRank(t *testing.T) {
	const calls, records = 40, 64
	mpirunner.Run(t, func(t *testing.T, c comm.Comm) {
		dir := mpirunner.TempDir(t, c)
		np, r := c.Size(), c.Rank()
		ft, err := collio.Vector(records, 1, np, collio.Int32)
		together(t, c, err, "building the view")
		run := func(measure string) (string, []byte) {
			path := filepath.Join(dir, "measure-"+measure)
			f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeRdWr, collio.Hints{"collio_measure": measure})
			together(t, c, err, "open (collio_measure=%s)", measure)
			err = f.SetView(int64(4*r), collio.Int32, ft, nil)
			together(t, c, err, "set_view")
			var seq []string
			buf := make([]byte, 4*records)
			for i := range calls {
				data := pattern(4*records, r, i)
				_, err := f.WriteAtAll(data, int64(i*records))
				if err == nil {
					last, _ := f.Stats()
					seq = append(seq, "w:"+last.Strategy)
					_, err = f.ReadAtAll(buf, int64(i*records))
				}
				if err == nil && !bytes.Equal(buf, data) {
					err = fmt.Errorf("read back other bytes")
				}
				if err == nil {
					last, _ := f.Stats()
					seq = append(seq, "r:"+last.Strategy)
				}
				together(t, c, err, "call %d (collio_measure=%s)", i, measure)
			}
			together(t, c, f.Close(), "close")
			got, err := os.ReadFile(path)
			together(t, c, err, "reading the file")
			return strings.Join(seq, " "), got
		}
		measured, measuredFile := run("enable")
		table, tableFile := run("disable")
		if r == 0 {
			t.Logf("measured: %s", measured)
		}
		all := gatherStrings(t, c, measured)
		for q, s := range all {
			if s != all[0] {
				t.Errorf("rank %d chose\n%s\nrank 0\n%s", q, s, all[0])
			}
		}
		kinds := map[string]bool{}
		for _, s := range strings.Fields(measured) {
			kinds[s] = true
		}
		// One rank (the unit tier's singleton run) has nothing to
		// interleave with: the table's choice stands, untimed.
		if np > 1 && len(kinds) < 3 {
			t.Errorf("the measured run tried too few strategies: %s", measured)
		}
		if len(strings.Fields(table)) != 2*calls {
			t.Errorf("the table's run recorded %d calls, want %d", len(strings.Fields(table)), 2*calls)
		}
		if !bytes.Equal(measuredFile, tableFile) {
			t.Errorf("the measured run's file differs from the table's")
		}
		checkpoint(t, c)
	})
}
