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

// listOfOne is listOfContiguous for blocks all of type t. Its arithmetic
// is plain: plainFits rules overflow out first (checking every sum and
// product was most of the cost of a block).
func listOfOne(op string, blocklens []int, displs []int64, t *Type) (*Type, bool) {
	if len(blocklens) < directMin || len(displs) != len(blocklens) {
		return nil, false
	}
	blk, ok := t.root.(*blockNode)
	if !ok || !t.IsContiguous() || !plainFits(blocklens, displs, blk, t) {
		return nil, false
	}
	ext := t.Extent()
	offs := make([]int64, 0, len(blocklens))
	prefix := make([]int64, 1, len(blocklens)+1)
	// The bounds, placed once: block i of n elements places t at shifts
	// displs[i] to displs[i]+(n-1)*ext.
	minShift, maxShift, placed := int64(0), int64(0), false
	for i, n := range blocklens {
		if n == 0 {
			continue
		}
		d := displs[i]
		hi := d + int64(n-1)*ext
		if !placed {
			minShift, maxShift, placed = d, hi, true
		} else {
			minShift, maxShift = min(minShift, d), max(maxShift, hi)
		}
		off, size := d+blk.lo, int64(n)*blk.size
		if k := len(offs) - 1; k >= 0 && offs[k]+prefix[k+1]-prefix[k] == off {
			prefix[k+1] += size // adjacent: one block
			continue
		}
		offs = append(offs, off)
		prefix = append(prefix, prefix[len(prefix)-1]+size)
	}
	if regularRun(offs, prefix) {
		return nil, false
	}
	var b builder
	var bd bounds
	if placed {
		bd.place(&b.checker, t, minShift, maxShift)
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

// plainFits reports whether listOfOne's sums and products stay within
// ±2^62 for these blocks, bounded by the largest displacement and block
// length; false also for a negative block length (the general path
// reports it).
func plainFits(blocklens []int, displs []int64, blk *blockNode, t *Type) bool {
	const limit = 1 << 62
	var maxD, maxN int64
	for i, n := range blocklens {
		d := displs[i]
		if n < 0 || d <= -limit || d >= limit {
			return false
		}
		maxD = max(maxD, d, -d)
		maxN = max(maxN, int64(n))
	}
	var c checker
	step := max(t.Extent(), -t.Extent(), blk.size)
	reach := c.add(c.add(maxD, c.mul(maxN, step)), max(blk.lo, -blk.lo, t.lb, -t.lb, t.ub, -t.ub))
	total := c.mul(int64(len(blocklens)), c.mul(maxN, blk.size))
	return !c.overflow && reach < limit && total < limit
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
