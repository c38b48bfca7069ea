//go:build cgo

package mpirunner

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/collio/collio/internal/comm"
)

// TempDir returns a directory that every rank of c sees: rank 0 creates it
// (under MPITEST_TMPDIR if set, which should be a shared file system when
// ranks run on several nodes) and broadcasts its path. When the test ends,
// rank 0 removes it after every rank is done with it, and every rank
// returns from the cleanup only once it is gone. All ranks of c must call it.
func TempDir(t *testing.T, c comm.Comm) string {
	t.Helper()
	var dir string
	if c.Rank() == 0 {
		d, err := os.MkdirTemp(os.Getenv("MPITEST_TMPDIR"), "mpirunner-")
		if err != nil {
			t.Errorf("mpirunner.TempDir: %v", err)
		} else {
			dir = d
		}
	}
	// Length first, so that every rank can size the path's buffer; an
	// empty path tells the other ranks that rank 0 failed.
	n := make([]byte, 8)
	binary.LittleEndian.PutUint64(n, uint64(len(dir)))
	if err := c.Bcast(n, 0); err != nil {
		t.Fatalf("mpirunner.TempDir: broadcasting the path length: %v", err)
	}
	path := make([]byte, binary.LittleEndian.Uint64(n))
	copy(path, dir)
	if err := c.Bcast(path, 0); err != nil {
		t.Fatalf("mpirunner.TempDir: broadcasting the path: %v", err)
	}
	if len(path) == 0 {
		t.Fatal("mpirunner.TempDir: rank 0 could not create the directory")
	}
	t.Cleanup(func() {
		// Wait for every rank, but never forever: a rank may have left.
		if _, err := gatherWithin(c, []byte{0}, agreeTimeout()); err != nil {
			t.Logf("mpirunner.TempDir: not removing %s: %v", path, err)
			return
		}
		if c.Rank() == 0 {
			if err := os.RemoveAll(string(path)); err != nil {
				t.Errorf("mpirunner.TempDir: removing %s: %v", path, err)
			}
		}
		if _, err := gatherWithin(c, []byte{0}, agreeTimeout()); err != nil {
			t.Logf("mpirunner.TempDir: waiting for the removal of %s: %v", path, err)
		}
	})
	return string(path)
}
