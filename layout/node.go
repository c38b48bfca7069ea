package layout

// The flattened representation: a tree of three node kinds. Offsets in a
// node are absolute within the owning type's coordinate space; subtrees are
// shared (never copied) when a type is reused, and moved by wrapping or by
// adjusting a repeat's offset.

// piece is a contiguous byte range (offset, length).
type piece struct{ off, n int64 }

func (p piece) end() int64 { return p.off + p.n }

// summary is cached on every node so that size, bounds, block counts and the
// filetype check are O(1) per node instead of walks over the blocks.
type summary struct {
	size   int64 // data bytes
	lo, hi int64 // min offset and max end of the data
	nb     int64 // number of blocks after merging adjacent ones
	first  piece // first merged block
	last   piece // last merged block
	mono   bool  // blocks in typemap order are non-decreasing and non-overlapping
}

type node interface{ sum() *summary }

// blockNode is one contiguous block [lo, lo+size).
type blockNode struct{ summary }

// repeatNode places body at off + i*stride for i in [0, count).
type repeatNode struct {
	summary
	off, count, stride int64
	body               node
}

// seqNode concatenates items in typemap order. prefix[i] is the number of
// data bytes before items[i] (len(items)+1 entries), for binary search.
type seqNode struct {
	summary
	items  []node
	prefix []int64
}

func (n *blockNode) sum() *summary  { return &n.summary }
func (n *repeatNode) sum() *summary { return &n.summary }
func (n *seqNode) sum() *summary    { return &n.summary }
