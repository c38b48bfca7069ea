package layout

// Type is a data layout: an ordered typemap of blocks plus a lower bound and
// an extent. It is immutable and safe to share between goroutines.
type Type struct {
	root   node  // flattened data; nil when the type holds no data
	size   int64 // root's data bytes, kept here: Size is on every call's path
	lb, ub int64 // bounds (see the package comment for the marker rule)
	sticky bool  // bounds come from lb/ub markers (Resized, Subarray, Darray)
}

// makeType is the one way to make a Type with data.
func makeType(root node, lb, ub int64, sticky bool) *Type {
	t := &Type{root: root, lb: lb, ub: ub, sticky: sticky}
	if root != nil {
		t.size = root.sum().size
	}
	return t
}

// Size is the number of data bytes.
func (t *Type) Size() int64 {
	if t == nil {
		return 0
	}
	return t.size
}

// LB is the lower bound.
func (t *Type) LB() int64 {
	if t == nil {
		return 0
	}
	return t.lb
}

// UB is the upper bound.
func (t *Type) UB() int64 {
	if t == nil {
		return 0
	}
	return t.ub
}

// Extent is UB - LB: the stride between consecutive copies of the type.
func (t *Type) Extent() int64 { return t.UB() - t.LB() }

// TrueLB is the lowest data offset (0 for a type without data).
func (t *Type) TrueLB() int64 {
	if t == nil || t.root == nil {
		return 0
	}
	return t.root.sum().lo
}

// TrueExtent is the span from the lowest data offset to the highest data end.
func (t *Type) TrueExtent() int64 {
	if t == nil || t.root == nil {
		return 0
	}
	s := t.root.sum()
	return s.hi - s.lo
}

// IsContiguous reports whether the type is one block of Size() bytes at
// offset LB() with Extent() == Size(), so that n copies are one block too.
// A type with no data and zero extent counts as contiguous.
func (t *Type) IsContiguous() bool {
	if t.Size() == 0 {
		return t.Extent() == 0
	}
	b, ok := t.root.(*blockNode)
	return ok && b.lo == t.LB() && b.size == t.Extent()
}

// NumBlocks is the number of contiguous blocks after merging adjacent ones.
// It is cached at construction, so it costs O(1) here and O(representation)
// to build; no case expands the blocks.
func (t *Type) NumBlocks() int64 {
	if t == nil || t.root == nil {
		return 0
	}
	return t.root.sum().nb
}

// bounds accumulates the lb/ub of a new type from its placed children,
// following MPI's marker rule: children with markers dominate.
type bounds struct {
	any, sticky bool
	lb, ub      int64
}

// place records child t replicated at shifts in [minShift, maxShift].
func (bd *bounds) place(c *checker, t *Type, minShift, maxShift int64) {
	if t.root == nil && !t.sticky {
		return // no typemap entries at all
	}
	if bd.sticky && !t.sticky {
		return
	}
	lb, ub := c.add(t.lb, minShift), c.add(t.ub, maxShift)
	if !bd.any || (t.sticky && !bd.sticky) {
		bd.any, bd.sticky, bd.lb, bd.ub = true, t.sticky, lb, ub
		return
	}
	bd.lb, bd.ub = min64(bd.lb, lb), max64(bd.ub, ub)
}

// newType assembles a type, or reports overflow.
func newType(op string, b *builder, root node, bd bounds) (*Type, error) {
	if b.overflow {
		return nil, errTooLarge(op)
	}
	return makeType(root, bd.lb, bd.ub, bd.sticky), nil
}
