package driver

// NodeCaches is implemented by drivers whose file systems may cache file
// data on each client node without keeping the caches coherent under
// byte-range locks: NFS, FUSE file systems such as GlusterFS, SMB. A
// rank there that reads a range under a lock can get bytes another node
// wrote and unlocked long before, so read-modify-write (data sieving,
// two-phase windows with holes) would write stale bytes back over them.
type NodeCaches interface {
	// IncoherentCaches returns why the file system holding path keeps
	// per-node caches that locks do not make coherent, or "" when it
	// does not (or cannot tell). magic is the file system's statfs magic
	// when the caller knows it (FSMagic), else 0, and the driver asks.
	IncoherentCaches(path string, magic uint32) string
}

// IncoherentCaches asks d about path (magic as for NodeCaches); "" when d
// cannot tell.
func IncoherentCaches(d Driver, path string, magic uint32) string {
	if n, ok := d.(NodeCaches); ok {
		return n.IncoherentCaches(path, magic)
	}
	return ""
}

// CacheDropper is a File whose node's client cache can be told to forget
// a range: the next read of it asks the file system. Where NodeCaches says
// the caches are not coherent, a node that cached a range before another
// node rewrote it would otherwise read its old bytes (GlusterFS's client
// keeps the pages of a file that stays open, whatever another node wrote).
type CacheDropper interface {
	// DropCached forgets the cached, unmodified pages of [off,
	// off+length); length 0 means to end of file.
	DropCached(off, length int64) error
}
