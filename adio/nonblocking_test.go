package adio

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
)

// Transfers in flight at once on a file must not read-modify-write: one's
// window, read before another wrote its bytes inside it, would be written
// back over them (a lost update that TestNonblockingCollective caught in
// about one run in ten). Operation Files never sieve writes, and the file
// itself does not while any is pending.
func TestNoReadModifyWriteWhileTransfersAreInFlight(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		f, err := Open(c, filepath.Join(dir, "f"), ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"romio_ds_write": "enable"}})
		if err != nil {
			return err
		}
		require.True(t, f.sieves(true), "sieving writes before any transfer")
		r, err := f.IWriteAtAll(Bytes(make([]byte, 64)), int64(64*c.Rank()))
		if err != nil {
			return err
		}
		require.False(t, f.sieves(true), "no sieving while a transfer is pending")
		require.False(t, r.of.sieves(true), "the operation's File never sieves writes")
		if _, err := r.Wait(); err != nil {
			return err
		}
		require.True(t, f.sieves(true), "sieving again once it was waited for")
		return f.Close()
	}))
}
