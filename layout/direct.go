package layout

// directMin: structs of at least this many blocks of one contiguous type
// are built as a list directly (see listOfContiguous).
const directMin = 64

// listOfContiguous builds the type of many blocks of one contiguous type
// (Indexed and HIndexed of MPI_BYTE or MPI_INT, as PnetCDF makes for a
// flush of many variables) straight into a list node: 16 bytes per merged
// block and no node per block, where the general path makes a node per
// block first (E3SM's flushes have 10^5-10^6 blocks per rank). It declines
// (ok false) where the general path may do better or must report an
// error: few blocks, mixed types, a negative block length, or a regular run
// of blocks the general path folds into a repeat.
func listOfContiguous(op string, blocklens []int, displs []int64, types []*Type) (*Type, bool) {
	if len(blocklens) < directMin || len(types) != len(blocklens) {
		return nil, false
	}
	for _, ti := range types {
		if ti != types[0] {
			return nil, false
		}
	}
	return listOfOne(op, blocklens, displs, types[0])
}

// listOfOne is listOfContiguous for blocks all of type t.
func listOfOne(op string, blocklens []int, displs []int64, t *Type) (*Type, bool) {
	if len(blocklens) < directMin || len(displs) != len(blocklens) {
		return nil, false
	}
	blk, ok := t.root.(*blockNode)
	if !ok || !t.IsContiguous() {
		return nil, false
	}
	var b builder
	var bd bounds
	ext := t.Extent()
	offs := make([]int64, 0, len(blocklens))
	prefix := make([]int64, 1, len(blocklens)+1)
	for i, n := range blocklens {
		if n < 0 {
			return nil, false
		}
		if n == 0 {
			continue
		}
		off := b.add(displs[i], blk.lo)
		size := b.mul(int64(n), blk.size)
		bd.place(&b.checker, t, displs[i], b.add(displs[i], b.mul(int64(n-1), ext)))
		if k := len(offs) - 1; k >= 0 && offs[k]+prefix[k+1]-prefix[k] == off {
			prefix[k+1] = b.add(prefix[k+1], size) // adjacent: one block
			continue
		}
		offs = append(offs, off)
		prefix = append(prefix, b.add(prefix[len(prefix)-1], size))
	}
	if b.overflow || regularRun(offs, prefix) {
		return nil, false
	}
	var root node
	switch len(offs) {
	case 0:
	case 1:
		root = b.block(offs[0], prefix[1])
	default:
		root = b.list(offs, prefix)
	}
	lt, err := newType(op, &b, root, bd)
	return lt, err == nil
}

// regularRun reports whether the blocks hold minBlockRun consecutive
// blocks of one length at a constant stride, which the general path keeps
// as a repeat instead of list entries.
func regularRun(offs, prefix []int64) bool {
	length := func(i int) int64 { return prefix[i+1] - prefix[i] }
	start := 0 // the run that block i may continue starts here
	for i := 1; i < len(offs); i++ {
		if length(i) != length(start) || (i-start >= 2 && offs[i]-offs[i-1] != offs[start+1]-offs[start]) {
			start = i
			if length(i) == length(i-1) {
				start = i - 1 // blocks i-1 and i set a new stride
			}
		}
		if i-start+1 >= minBlockRun {
			return true
		}
	}
	return false
}

// list builds a list node from merged blocks (offs, prefix as in listNode;
// at least two blocks, no two adjacent in order).
func (b *builder) list(offs, prefix []int64) node {
	l := &listNode{offs: offs, prefix: prefix}
	l.mono = true
	l.lo, l.hi = offs[0], offs[0]+prefix[1]
	for i := 1; i < len(offs); i++ {
		end := offs[i] + prefix[i+1] - prefix[i]
		l.mono = l.mono && offs[i-1]+prefix[i]-prefix[i-1] <= offs[i]
		l.lo, l.hi = min64(l.lo, offs[i]), max64(l.hi, end)
	}
	l.nb = int64(len(offs))
	l.size = prefix[len(offs)]
	l.first = l.block(0)
	l.last = l.block(len(offs) - 1)
	return l
}
