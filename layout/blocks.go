package layout

import (
	"iter"
	"math"
)

// Blocks yields the (offset, length) blocks of t in typemap order, adjacent
// blocks merged. It is lazy and holds O(tree depth) memory.
func (t *Type) Blocks() iter.Seq2[int64, int64] {
	return func(yield func(int64, int64) bool) {
		if t == nil {
			return
		}
		var c cursor
		c.seek(t.root, 0, 0)
		for !c.done {
			if !yield(c.take(math.MaxInt64)) {
				return
			}
		}
	}
}
