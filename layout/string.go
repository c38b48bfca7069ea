package layout

import (
	"fmt"
	"strings"
)

// maxShownItems bounds how many items of a sequence String prints.
const maxShownItems = 3

// String describes t compactly: size, bounds and the flattened tree, with
// long sequences abbreviated.
func (t *Type) String() string {
	if t == nil {
		return "layout<nil>"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "layout{size=%d lb=%d extent=%d", t.Size(), t.LB(), t.Extent())
	if t.root != nil {
		sb.WriteString(": ")
		writeNode(&sb, t.root)
	}
	sb.WriteString("}")
	return sb.String()
}

func writeNode(sb *strings.Builder, n node) {
	switch v := n.(type) {
	case *blockNode:
		fmt.Fprintf(sb, "[%d+%d]", v.lo, v.size)
	case *repeatNode:
		fmt.Fprintf(sb, "%d×(%d+%d·i: ", v.count, v.off, v.stride)
		writeNode(sb, v.body)
		sb.WriteString(")")
	case *listNode:
		sb.WriteString("list(")
		for i := range v.offs {
			if i == maxShownItems {
				fmt.Fprintf(sb, " …+%d", len(v.offs)-i)
				break
			}
			if i > 0 {
				sb.WriteString(" ")
			}
			p := v.block(i)
			fmt.Fprintf(sb, "[%d+%d]", p.off, p.n)
		}
		sb.WriteString(")")
	case *seqNode:
		sb.WriteString("seq(")
		for i, it := range v.items {
			if i == maxShownItems {
				fmt.Fprintf(sb, " …+%d", len(v.items)-i)
				break
			}
			if i > 0 {
				sb.WriteString(" ")
			}
			writeNode(sb, it)
		}
		sb.WriteString(")")
	}
}
