package layout

import "sort"

// cursor walks the blocks of a tree in typemap order. It holds one frame per
// tree level, so it costs O(depth) memory, and seeking descends once from the
// root: O(depth × log(seq width)).
type cursor struct {
	stack []frame
	blk   piece // current block, absolute offsets
	used  int64 // bytes of blk already consumed
	done  bool
}

// frame is a repeat or seq node being walked and the child being visited.
type frame struct {
	n    node
	base int64 // shift applied to the node's offsets
	idx  int64 // repeat iteration or seq item
}

// seek positions the cursor at data byte pos of root (shifted by base);
// pos at or past the end leaves it done.
func (c *cursor) seek(root node, base, pos int64) {
	c.stack = c.stack[:0]
	c.done = true
	if root == nil || pos < 0 || pos >= root.sum().size {
		return
	}
	c.descend(root, base, pos)
}

// descend pushes frames from n down to the block holding data byte pos.
func (c *cursor) descend(n node, base, pos int64) {
	for {
		switch v := n.(type) {
		case *blockNode:
			c.blk, c.used, c.done = piece{base + v.lo, v.size}, pos, false
			return
		case *repeatNode:
			bodySize := v.body.sum().size
			i := pos / bodySize
			c.stack = append(c.stack, frame{v, base, i})
			base += v.off + i*v.stride
			pos -= i * bodySize
			n = v.body
		case *seqNode:
			i := sort.Search(len(v.items), func(k int) bool { return v.prefix[k+1] > pos })
			c.stack = append(c.stack, frame{v, base, int64(i)})
			pos -= v.prefix[i]
			n = v.items[i]
		case *listNode:
			i := sort.Search(len(v.offs), func(k int) bool { return v.prefix[k+1] > pos })
			c.stack = append(c.stack, frame{v, base, int64(i)})
			p := v.block(i)
			c.blk, c.used, c.done = piece{base + p.off, p.n}, pos-v.prefix[i], false
			return
		}
	}
}

// nextBlock moves to the first byte of the following block.
func (c *cursor) nextBlock() {
	for len(c.stack) > 0 {
		f := &c.stack[len(c.stack)-1]
		f.idx++
		switch v := f.n.(type) {
		case *repeatNode:
			if f.idx < v.count {
				c.descend(v.body, f.base+v.off+f.idx*v.stride, 0)
				return
			}
		case *seqNode:
			if f.idx < int64(len(v.items)) {
				c.descend(v.items[f.idx], f.base, 0)
				return
			}
		case *listNode:
			if f.idx < int64(len(v.offs)) {
				p := v.block(int(f.idx))
				c.blk, c.used = piece{f.base + p.off, p.n}, 0
				return
			}
		}
		c.stack = c.stack[:len(c.stack)-1]
	}
	c.done = true
}

// take consumes up to max bytes that are contiguous from the current
// position, merging following blocks that start where the last one ended.
func (c *cursor) take(max int64) (off, n int64) {
	off = c.blk.off + c.used
	for !c.done && n < max && c.blk.off+c.used == off+n {
		k := min64(c.blk.n-c.used, max-n)
		n += k
		c.used += k
		if c.used == c.blk.n {
			c.nextBlock()
		}
	}
	return off, n
}

// dataBefore counts the data bytes of n (shifted by base) whose offset is
// < off. n must be ordered (summary.mono): its data bytes then have strictly
// increasing offsets in typemap order, so one descent suffices, choosing at
// each level by binary search the last child that starts before off. It
// costs O(depth × log(seq width)).
func dataBefore(n node, base, off int64) int64 {
	var acc int64
	for n != nil {
		s := n.sum()
		if off <= base+s.lo {
			return acc
		}
		if off >= base+s.hi {
			return acc + s.size
		}
		// Here base+lo < off < base+hi: off falls inside n's span.
		switch v := n.(type) {
		case *blockNode:
			return acc + off - (base + v.lo)
		case *repeatNode:
			// Copy i covers [start+i*stride, end+i*stride) and, ordered,
			// stride >= end-start: descend into the last copy starting
			// before off; earlier copies lie wholly below off, later ones
			// wholly at or above it. The tiles of a stream are such a
			// repeat, so this is also the tile index of an infinite view.
			body := v.body.sum()
			var i int64
			if v.count > 1 && v.stride > 0 {
				start := base + v.off + body.lo
				i = min64((off-start-1)/v.stride, v.count-1)
			}
			acc += i * body.size
			base += v.off + i*v.stride
			n = v.body
		case *seqNode:
			// The number of items starting before off (at least one).
			j := sort.Search(len(v.items), func(k int) bool { return base+v.items[k].sum().lo >= off })
			acc += v.prefix[j-1]
			n = v.items[j-1]
		case *listNode:
			j := sort.Search(len(v.offs), func(k int) bool { return base+v.offs[k] >= off })
			p := v.block(j - 1)
			return acc + v.prefix[j-1] + min64(p.n, off-(base+p.off))
		default:
			return acc
		}
	}
	return acc
}
