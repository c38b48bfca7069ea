package layout

import "unsafe"

// Footprint approximates the bytes held by t's representation, counting
// shared subtrees once.
func (t *Type) Footprint() int {
	if t == nil {
		return 0
	}
	seen := map[node]bool{}
	return int(unsafe.Sizeof(*t)) + nodeFootprint(t.root, seen)
}

func nodeFootprint(n node, seen map[node]bool) int {
	if n == nil || seen[n] {
		return 0
	}
	seen[n] = true
	switch v := n.(type) {
	case *blockNode:
		return int(unsafe.Sizeof(*v))
	case *repeatNode:
		return int(unsafe.Sizeof(*v)) + nodeFootprint(v.body, seen)
	case *listNode:
		return int(unsafe.Sizeof(*v)) + (cap(v.offs)+cap(v.prefix))*int(unsafe.Sizeof(v.offs[0]))
	case *seqNode:
		total := int(unsafe.Sizeof(*v)) + cap(v.items)*int(unsafe.Sizeof(v.items[0])) +
			cap(v.prefix)*int(unsafe.Sizeof(v.prefix[0]))
		for _, it := range v.items {
			total += nodeFootprint(it, seen)
		}
		return total
	}
	return 0
}
