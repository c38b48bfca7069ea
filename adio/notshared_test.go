package adio

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// nodeLocal is ufs as seen by a rank on another node when the path is in
// a node-local directory: only rank 0 finds the file.
type nodeLocal struct{ driver.Driver }

func (nodeLocal) Name() string { return "nodelocal" }

func (d nodeLocal) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	if opts.Params[hints.CollioRank] != "0" {
		return nil, &fs.PathError{Op: "open", Path: path, Err: unix.ENOENT}
	}
	return d.Driver.Open(path, opts)
}

func init() {
	ufs, _ := driver.ByName("ufs")
	driver.Register(nodeLocal{ufs})
}

// A file rank 0 created (or found) that other ranks cannot see is not
// "the directory does not exist" on those ranks: every rank is told that
// the path is not on a file system every node shares.
func TestOpenNotSharedSaysSo(t *testing.T) {
	for _, mode := range []Mode{ModeCreate | ModeRdWr, ModeRdOnly} {
		path := tempPath(t, "local")
		if mode&ModeCreate == 0 {
			world(t, 1, func(c comm.Comm) error { // make the file first
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
				if err == nil {
					err = f.Close()
				}
				return err
			})
		}
		errs := sameOnAll(t, 3, func(c comm.Comm) error {
			f, err := Open(c, "nodelocal:"+path, mode, OpenOptions{})
			if err == nil {
				f.Close()
			}
			return err
		})
		require.ErrorIs(t, errs[0], ioerr.ErrNotFound, "mode %v", mode)
		require.Contains(t, errs[0].Error(), "rank 0 has the file open, but not every rank can see it", "mode %v", mode)
	}
}
