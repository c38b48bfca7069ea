package ufs

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Magic numbers (statfs(2)) of file systems whose clients cache data per
// node and do not flush or drop it at byte-range locks.
var perNodeCaches = map[uint32]string{
	0x65735546: "FUSE",
	0x6969:     "NFS",
	0xfe534d42: "SMB2",
	0xff534d42: "CIFS",
	0x01021997: "9P",
}

// IncoherentCaches names the file system under path when it is one of
// perNodeCaches. Unless the caller knows its magic, the directory is
// asked, so that it works before the file exists.
func (ufsDriver) IncoherentCaches(path string, magic uint32) string {
	if magic == 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
			return ""
		}
		magic = uint32(st.Type)
	}
	if name, ok := perNodeCaches[magic]; ok {
		return fmt.Sprintf("%s's client caches are not coherent under byte-range locks across nodes", name)
	}
	return ""
}
