package adio

import (
	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
)

// noteNodeCaches turns read-modify-write off (data sieving of writes,
// two-phase windows with holes) for a file that ranks on several nodes
// share on a file system whose per-node caches locks do not keep
// coherent (NFS, GlusterFS through FUSE): a window read under a lock
// there may hold bytes another node wrote long before, and writing it
// back would undo them. Every rank then writes only its own bytes, as
// OMPIO does. romio_ds_write=enable cannot bring it back; it gets a
// warning instead. Every rank decides alike: the node count is agreed
// and every node sees the same file system.
func (f *File) noteNodeCaches() {
	if f.nodes.Count() < 2 {
		return
	}
	why := driver.IncoherentCaches(f.stack.Driver(), f.stack.Path(), f.stack.FSMagic())
	if why == "" {
		return
	}
	f.nodeCaches = true
	if !f.dsWriteOK {
		return
	}
	f.dsWriteOK = false
	if f.hints.Enum(hints.RomioDSWrite) == hints.Enable {
		f.setHints(f.hints.WithWarning("romio_ds_write=enable is ignored: " + why + ", so ranks on different nodes write only their own bytes"))
	}
}

// publishDrained syncs the global file under the E10 cache wb after a
// drain, where other nodes' clients see the copied bytes only once they
// have left this node's client (GlusterFS's write-behind holds them past
// the write calls): the drain's promise is that the call's aggregators,
// on any node, read the global file current.
func (f *File) publishDrained(wb driver.WriteBack) error {
	if !f.nodeCaches {
		return nil
	}
	return wb.SyncCopies()
}

// publishClose syncs a file this rank may have written before closing it,
// where another node may open it next (MPI's close includes a sync): a
// close on GlusterFS returns while write-behind still holds the data
// (flush-behind), and a node that opened the file right after read the
// bytes as they were. A file under the E10 cache copies and syncs at its
// own close.
func (f *File) publishClose() error {
	if f.cached {
		return nil
	}
	return f.flushNodeCache()
}

// flushNodeCache sends what this rank wrote past its node's client cache
// to the file system (fsync; under the E10 cache, of the global file),
// where other nodes would not see it yet: at close, before set_size, and
// after a collective write whose aggregators wrote other ranks' bytes
// (MPI lets a rank read back what it wrote, and the bytes went through
// another node's client; capi.c read old bytes 1 run in 4 on GlusterFS).
func (f *File) flushNodeCache() error {
	if !f.nodeCaches || !f.mode.canWrite() || f.f == nil {
		return nil
	}
	if wb, ok := f.writeBack(); ok {
		return f.publishDrained(wb)
	}
	return f.f.Sync()
}

// dropNodeCache makes this node's client forget its cached pages of
// [start, end) (end 0: to end of file), where another node may have
// written them since: after a collective write whose aggregators wrote
// other ranks' bytes (every rank, once the aggregators synced, so that a
// rank reading its bytes back, or an aggregator of a later call, asks the
// servers), and after sync (MPI's sync-barrier-sync). GlusterFS's client
// otherwise kept serving a node the pages it had read before, while the
// file stayed open: 1 read in 40 of a rank's own block returned old bytes.
// Without a NodeCaches file system, or a driver that can drop, nothing.
func (f *File) dropNodeCache(start, end int64) error {
	if !f.nodeCaches || f.f == nil || (end != 0 && end <= start) {
		return nil
	}
	d, ok := driver.As[driver.CacheDropper](f.f)
	if !ok {
		return nil
	}
	length := int64(0)
	if end != 0 {
		length = end - start
	}
	return d.DropCached(start, length)
}
