package adio

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/stretchr/testify/require"
)

// A record that cannot be written is a warning; the I/O goes on.
func TestRecordingFailureIsAWarning(t *testing.T) {
	path := tempPath(t, "out")
	bad := filepath.Join(t.TempDir(), "missing", "dir")
	var stderr [2]bytes.Buffer
	world(t, 2, func(c comm.Comm) error {
		getenv := func(k string) string {
			if k == "COLLIO_RECORD" {
				return bad
			}
			return ""
		}
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Getenv: getenv, Stderr: &stderr[c.Rank()]})
		if err != nil {
			return err
		}
		data := rankData(c.Rank(), 100)
		if _, err := f.WriteAtAll(Access{Buf: data, Count: 100}, int64(100*c.Rank())); err != nil {
			return err
		}
		return f.Close()
	})
	for r := range 2 {
		require.Contains(t, stderr[r].String(), "collio: warning: COLLIO_RECORD: record: open "+bad)
		require.Contains(t, stderr[r].String(), "(recording stopped)")
	}
	require.Equal(t, append(rankData(0, 100), rankData(1, 100)...), readFile(t, path))
}
