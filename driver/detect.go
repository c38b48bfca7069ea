package driver

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Magic numbers that statfs reports in f_type for the file systems that
// have (or will have) their own driver.
const (
	magicLustre uint32 = 0x0BD00BD0
	magicBeeGFS uint32 = 0x19830326
	magicNFS    uint32 = 0x6969
	magicGPFS   uint32 = 0x47504653
)

// fsNameByMagic names the driver for a magic; anything else is "ufs".
var fsNameByMagic = map[uint32]string{
	magicLustre: "lustre",
	magicBeeGFS: "beegfs",
	magicNFS:    "nfs",
	magicGPFS:   "gpfs",
}

// fsMagic returns the statfs f_type of path. A variable so that tests can
// pretend to be on Lustre or BeeGFS.
var fsMagic = func(path string) (uint32, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return uint32(st.Type), nil
}

// DetectFSName names the file system that holds path by its statfs magic:
// "lustre", "beegfs", "nfs", "gpfs", or "ufs" for everything else. A path
// that does not exist yet (a file about to be created) is judged by its
// nearest existing ancestor. The name is the file system's, whether or not
// a driver of that name is registered; Resolve does the fallback.
func DetectFSName(path string) (string, error) {
	magic, err := FSMagic(path)
	if err != nil {
		return "", err
	}
	return fsNameOf(magic), nil
}

// FSMagic is the statfs magic (f_type) of the file system that holds
// path, or of its nearest existing ancestor while path does not exist.
// On NFS and FUSE each statfs is a round trip to the servers: a
// collective open asks on one rank and hands the answer to the others
// (ResolveKnown, OpenOptions.FSMagic, IncoherentCaches).
func FSMagic(path string) (uint32, error) { return magicOfNearestExisting(path) }

// fsNameOf names the file system of a magic, as DetectFSName does.
func fsNameOf(magic uint32) string {
	if name, ok := fsNameByMagic[magic]; ok {
		return name
	}
	return "ufs"
}

// magicOfNearestExisting walks up from path until statfs succeeds. Only
// "does not exist" errors move up; anything else (EACCES...) is reported.
func magicOfNearestExisting(path string) (uint32, error) {
	p := filepath.Clean(path)
	for {
		magic, err := fsMagic(p)
		if err == nil {
			return magic, nil
		}
		parent := filepath.Dir(p)
		if !isMissing(err) || parent == p {
			return 0, err
		}
		p = parent
	}
}

// isMissing reports errors meaning "this path is not there": ENOENT, and
// ENOTDIR for a path under a regular file (open will report that itself).
func isMissing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

// SetStatfsForTest replaces the statfs lookup that detection uses (it
// returns the f_type magic of a path) until restore is called, so that
// tests of drivers in other packages can pretend to be on their file
// system. Not safe while other goroutines resolve paths.
func SetStatfsForTest(f func(path string) (uint32, error)) (restore func()) {
	saved := fsMagic
	fsMagic = f
	return func() { fsMagic = saved }
}
