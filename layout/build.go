package layout

// builder constructs normalised nodes and records arithmetic overflow.
type builder struct {
	checker
}

// block returns a block node; n <= 0 gives nil (no data).
func (b *builder) block(off, n int64) node {
	if n <= 0 {
		return nil
	}
	end := b.add(off, n)
	p := piece{off, n}
	return &blockNode{summary{size: n, lo: off, hi: end, nb: 1, first: p, last: p, mono: true}}
}

// shift moves a subtree by d bytes without copying it.
func (b *builder) shift(n node, d int64) node {
	if n == nil || d == 0 {
		return n
	}
	switch v := n.(type) {
	case *blockNode:
		return b.block(b.add(v.lo, d), v.size)
	case *repeatNode:
		return b.makeRepeat(b.add(v.off, d), v.count, v.stride, v.body)
	}
	return b.makeRepeat(d, 1, 0, n)
}

// repeat replicates body count times at off + i*stride, normalising:
// contiguous runs become one block and nested repeats that tile evenly merge.
func (b *builder) repeat(off, count, stride int64, body node) node {
	if body == nil || count <= 0 {
		return nil
	}
	if count == 1 {
		return b.shift(body, off)
	}
	switch v := body.(type) {
	case *blockNode:
		if stride == v.size {
			return b.block(b.add(off, v.lo), b.mul(count, v.size))
		}
	case *repeatNode:
		if b.mul(v.count, v.stride) == stride {
			return b.repeat(b.add(off, v.off), b.mul(count, v.count), v.stride, v.body)
		}
	}
	return b.makeRepeat(off, count, stride, body)
}

// makeRepeat builds a repeat node without normalisation (count >= 1).
func (b *builder) makeRepeat(off, count, stride int64, body node) node {
	s := body.sum()
	span := b.mul(count-1, stride)
	r := &repeatNode{off: off, count: count, stride: stride, body: body}
	r.size = b.mul(count, s.size)
	r.lo = b.add(b.add(off, s.lo), min64(0, span))
	r.hi = b.add(b.add(off, s.hi), max64(0, span))
	joins := s.last.end() == s.first.off+stride
	r.nb = b.mul(count, s.nb)
	if joins {
		r.nb -= count - 1
	}
	r.first = piece{b.add(s.first.off, off), s.first.n}
	r.last = piece{b.add(b.add(s.last.off, off), span), s.last.n}
	r.mono = s.mono && (count == 1 || s.lo+stride >= s.hi)
	if r.nb == 1 && !b.overflow {
		return b.block(r.lo, r.size)
	}
	return r
}
