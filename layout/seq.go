package layout

// spliceMax: nested sequences up to this many items are inlined into their
// parent (cheap, and lets adjacent blocks merge); larger ones stay shared.
const spliceMax = 8

// minRun: this many consecutive items of the same shape at a constant
// stride are folded into one repeat (regular Indexed/Struct patterns).
// Blocks need a longer run: a short run costs less as list entries.
const (
	minRun       = 3
	minBlockRun  = 8
	minListBlock = 4 // shorter runs of blocks inside a seq stay nodes
)

// seq concatenates items (nil items are skipped) in typemap order.
func (b *builder) seq(items []node) node {
	var out []node
	for _, it := range items {
		out = b.appendItem(out, it)
	}
	out = b.foldRuns(out)
	if b.overflow {
		return nil // the type is refused; an overflowed fold may have left nil items
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	if allBlocks(out) {
		return b.makeList(out)
	}
	out = b.groupBlocks(out)
	if len(out) == 1 {
		return out[0]
	}
	return b.makeSeq(out)
}

// appendItem appends one item, splicing small sequences and merging a block
// into a preceding adjacent block.
func (b *builder) appendItem(out []node, it node) []node {
	switch v := it.(type) {
	case nil:
		return out
	case *seqNode:
		if len(v.items) <= spliceMax {
			for _, sub := range v.items {
				out = b.appendItem(out, sub)
			}
			return out
		}
	case *listNode:
		if len(v.offs) <= spliceMax {
			for _, sub := range b.blocksOf(v, 0) {
				out = b.appendItem(out, sub)
			}
			return out
		}
	case *repeatNode:
		if s, ok := v.body.(*seqNode); ok && v.count == 1 && len(s.items) <= spliceMax {
			for _, sub := range s.items {
				out = b.appendItem(out, b.shift(sub, v.off))
			}
			return out
		}
		if l, ok := v.body.(*listNode); ok && v.count == 1 && len(l.offs) <= spliceMax {
			for _, sub := range b.blocksOf(l, v.off) {
				out = b.appendItem(out, sub)
			}
			return out
		}
	case *blockNode:
		if k := len(out) - 1; k >= 0 {
			if prev, ok := out[k].(*blockNode); ok && prev.hi == v.lo {
				out[k] = b.block(prev.lo, b.add(prev.size, v.size))
				return out
			}
		}
	}
	return append(out, it)
}

// shapeKey returns the offset that places an item, for the items whose
// shape can be compared cheaply (blocks and repeats).
func shapeKey(n node) (off int64, ok bool) {
	switch v := n.(type) {
	case *blockNode:
		return v.lo, true
	case *repeatNode:
		return v.off, true
	}
	return 0, false
}

// sameShape reports whether b is a translated copy of a.
func sameShape(a, b node) bool {
	switch x := a.(type) {
	case *blockNode:
		y, ok := b.(*blockNode)
		return ok && x.size == y.size
	case *repeatNode:
		y, ok := b.(*repeatNode)
		return ok && x.body == y.body && x.count == y.count && x.stride == y.stride
	}
	return false
}

// foldRuns replaces runs of >= minRun same-shaped items at a constant
// offset delta by a single repeat.
func (b *builder) foldRuns(items []node) []node {
	if len(items) < minRun {
		return items
	}
	out := items[:0:0]
	for i := 0; i < len(items); {
		j := runEnd(items, i)
		need := minRun
		if _, ok := items[i].(*blockNode); ok {
			need = minBlockRun
		}
		if j-i < need {
			out = append(out, items[i])
			i++
			continue
		}
		off0, _ := shapeKey(items[i])
		off1, _ := shapeKey(items[i+1])
		out = append(out, b.repeat(off0, int64(j-i), off1-off0, b.shift(items[i], -off0)))
		i = j
	}
	return out
}

// runEnd returns the end (exclusive) of the run of same-shaped items with a
// constant offset delta that starts at i.
func runEnd(items []node, i int) int {
	off0, ok := shapeKey(items[i])
	if !ok || i+1 >= len(items) || !sameShape(items[i], items[i+1]) {
		return i + 1
	}
	off1, _ := shapeKey(items[i+1])
	delta := off1 - off0
	j := i + 2
	for j < len(items) && sameShape(items[i], items[j]) {
		offj, _ := shapeKey(items[j])
		prev, _ := shapeKey(items[j-1])
		if offj-prev != delta {
			break
		}
		j++
	}
	return j
}

// groupBlocks stores runs of consecutive plain blocks as list nodes.
func (b *builder) groupBlocks(items []node) []node {
	out := items[:0:0]
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && isBlock(items[j]) {
			j++
		}
		switch {
		case j-i >= minListBlock:
			out = append(out, b.makeList(items[i:j]))
		case j > i:
			out = append(out, items[i:j]...)
		default:
			out = append(out, items[i])
			j = i + 1
		}
		i = j
	}
	return out
}

func isBlock(n node) bool {
	_, ok := n.(*blockNode)
	return ok
}

// makeSeq builds a sequence node over at least two non-nil items.
func (b *builder) makeSeq(items []node) node {
	s := &seqNode{items: items, prefix: make([]int64, len(items)+1)}
	s.mono = true
	for i, it := range items {
		c := it.sum()
		s.prefix[i+1] = b.add(s.prefix[i], c.size)
		if i == 0 {
			s.lo, s.hi = c.lo, c.hi
		} else {
			p := items[i-1].sum()
			s.lo, s.hi = min64(s.lo, c.lo), max64(s.hi, c.hi)
			if p.hi > c.lo {
				s.mono = false
			}
			if p.last.end() == c.first.off {
				s.nb-- // the two merge into one block
			}
		}
		s.nb += c.nb
		s.mono = s.mono && c.mono
	}
	s.size = s.prefix[len(items)]
	s.first, s.last = mergedEnds(items)
	if s.nb == 1 && !b.overflow {
		return b.block(s.first.off, s.first.n)
	}
	return s
}

// mergedEnds returns the first and last merged blocks of a sequence, which
// may extend across items that are single blocks.
func mergedEnds(items []node) (first, last piece) {
	first = items[0].sum().first
	for j := 1; j < len(items) && items[j-1].sum().nb == 1; j++ {
		c := items[j].sum()
		if first.end() != c.first.off {
			break
		}
		first.n += c.first.n
	}
	k := len(items) - 1
	last = items[k].sum().last
	for j := k - 1; j >= 0 && items[j+1].sum().nb == 1; j-- {
		c := items[j].sum()
		if c.last.end() != last.off {
			break
		}
		last = piece{c.last.off, c.last.n + last.n}
	}
	return first, last
}
