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
	// does not (or cannot tell).
	IncoherentCaches(path string) string
}

// IncoherentCaches asks d about path; "" when d cannot tell.
func IncoherentCaches(d Driver, path string) string {
	if n, ok := d.(NodeCaches); ok {
		return n.IncoherentCaches(path)
	}
	return ""
}
