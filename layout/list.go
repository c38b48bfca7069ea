package layout

// listNode is a sequence of plain blocks kept as parallel arrays, the compact
// form of irregular Indexed/HIndexed types: 16 bytes per block instead of a
// node per block. prefix[i] is the number of data bytes before block i, so
// block i has length prefix[i+1]-prefix[i].
type listNode struct {
	summary
	offs   []int64
	prefix []int64
}

func (n *listNode) sum() *summary { return &n.summary }

func (n *listNode) block(i int) piece {
	return piece{n.offs[i], n.prefix[i+1] - n.prefix[i]}
}

// allBlocks reports whether every item is a plain block.
func allBlocks(items []node) bool {
	for _, it := range items {
		if _, ok := it.(*blockNode); !ok {
			return false
		}
	}
	return true
}

// makeList builds a list node from at least two block nodes.
func (b *builder) makeList(items []node) node {
	l := &listNode{offs: make([]int64, len(items)), prefix: make([]int64, len(items)+1)}
	l.mono = true
	for i, it := range items {
		c := it.(*blockNode)
		l.offs[i] = c.lo
		l.prefix[i+1] = b.add(l.prefix[i], c.size)
		if i == 0 {
			l.lo, l.hi = c.lo, c.hi
		} else {
			prevEnd := l.offs[i-1] + l.prefix[i] - l.prefix[i-1]
			l.mono = l.mono && prevEnd <= c.lo
			if prevEnd == c.lo {
				l.nb-- // cannot happen after appendItem merges, kept for safety
			}
			l.lo, l.hi = min64(l.lo, c.lo), max64(l.hi, c.hi)
		}
		l.nb++
	}
	l.size = l.prefix[len(items)]
	l.first, l.last = mergedEnds(items)
	return l
}

// blocksOf expands a list into block nodes (used to splice small lists).
func (b *builder) blocksOf(l *listNode, shift int64) []node {
	out := make([]node, len(l.offs))
	for i := range l.offs {
		p := l.block(i)
		out[i] = b.block(b.add(p.off, shift), p.n)
	}
	return out
}
