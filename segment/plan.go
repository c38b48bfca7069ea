package segment

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// pc is one piece of a member's file access: the file bytes [off, off+n).
// hide marks bytes a higher-ranked member of the group also writes: they
// are still shipped (they are part of the member's data stream) but not
// written, so each byte is written once, by its highest-ranked writer.
type pc struct {
	off, n int64
	hide   bool
}

// seg is a piece of one cycle: file bytes [off, off+n) of member m, whose
// data is at [at, at+n) of that member's chunk for the cycle.
type seg struct {
	off, n int64
	at     int64
	m      int32
	hide   bool
}

// cursors walks the members' sorted piece lists in merged file order: a
// heap of members keyed by the file offset of their next unconsumed byte
// (ties by member, i.e. by rank). A piece may be consumed in parts.
type cursors struct {
	lists [][]pc
	next  []int   // index of each member's current piece
	used  []int64 // bytes of it already consumed
	h     []int32 // members with bytes left
}

func newCursors(lists [][]pc) *cursors {
	c := &cursors{lists: lists, next: make([]int, len(lists)), used: make([]int64, len(lists))}
	for m, l := range lists {
		if len(l) > 0 {
			c.h = append(c.h, int32(m))
		}
	}
	heap.Init(c)
	return c
}

func (c *cursors) key(m int32) int64 { return c.lists[m][c.next[m]].off + c.used[m] }

func (c *cursors) Len() int { return len(c.h) }
func (c *cursors) Less(i, j int) bool {
	a, b := c.h[i], c.h[j]
	ka, kb := c.key(a), c.key(b)
	return ka < kb || ka == kb && a < b
}
func (c *cursors) Swap(i, j int) { c.h[i], c.h[j] = c.h[j], c.h[i] }
func (c *cursors) Push(x any)    { c.h = append(c.h, x.(int32)) }
func (c *cursors) Pop() any {
	m := c.h[len(c.h)-1]
	c.h = c.h[:len(c.h)-1]
	return m
}

// peek returns the file offset of the next byte in merged order.
func (c *cursors) peek() (int64, bool) {
	if len(c.h) == 0 {
		return 0, false
	}
	return c.key(c.h[0]), true
}

// take consumes at most max bytes of the first member's current piece and
// returns what it took.
func (c *cursors) take(max int64) (m int32, p pc) {
	m = c.h[0]
	cur := c.lists[m][c.next[m]]
	u := c.used[m]
	p = pc{off: cur.off + u, n: min(cur.n-u, max), hide: cur.hide}
	if u+p.n < cur.n {
		c.used[m] += p.n
		heap.Fix(c, 0)
		return m, p
	}
	c.next[m]++
	c.used[m] = 0
	if c.next[m] == len(c.lists[m]) {
		heap.Pop(c)
	} else {
		heap.Fix(c, 0)
	}
	return m, p
}

// planner fills a cycle's segments and per-member counts.
type planner interface {
	plan(cy *cycle)
}

// dynamicPlan is dynamic segmentation: each cycle takes the next budget
// bytes of the group's merged pieces in file order, whoever they belong
// to, cutting a piece at the cycle edge. The segments come out sorted.
type dynamicPlan struct {
	c      *cursors
	budget int64
}

func (d *dynamicPlan) plan(cy *cycle) {
	cy.reset()
	for left := d.budget; left > 0 && d.c.Len() > 0; {
		m, p := d.c.take(left)
		cy.segs = append(cy.segs, seg{off: p.off, n: p.n, at: cy.counts[m], m: m, hide: p.hide})
		cy.counts[m] += p.n
		left -= p.n
	}
}

// staticPlan is static segmentation: in each cycle every member
// contributes the next share bytes of its own data stream (fewer at its
// end); the cycle's segments are then sorted by file offset.
type staticPlan struct {
	lists [][]pc
	next  []int
	used  []int64
	share int64
}

func (s *staticPlan) plan(cy *cycle) {
	cy.reset()
	for m, l := range s.lists {
		for left := s.share; left > 0 && s.next[m] < len(l); {
			cur := l[s.next[m]]
			u := s.used[m]
			n := min(cur.n-u, left)
			cy.segs = append(cy.segs, seg{off: cur.off + u, n: n, at: cy.counts[m], m: int32(m), hide: cur.hide})
			cy.counts[m] += n
			left -= n
			if u+n == cur.n {
				s.next[m]++
				s.used[m] = 0
			} else {
				s.used[m] += n
			}
		}
	}
	slices.SortFunc(cy.segs, func(a, b seg) int {
		return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.m, b.m))
	})
}

// dynamicCycles and staticCycles count a group's cycles.
func dynamicCycles(totals []int64, budget int64) int64 {
	var t int64
	for _, b := range totals {
		t += b
	}
	return ceilDiv(t, budget)
}

func staticCycles(totals []int64, share int64) int64 {
	var c int64
	for _, b := range totals {
		c = max(c, ceilDiv(b, share))
	}
	return c
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// span is a file range [start, end).
type span struct{ start, end int64 }

// hideOverlaps marks, in the members' lists, the bytes that a
// higher-ranked member also writes, splitting pieces where needed. It
// reports whether any bytes overlapped. Each list must be sorted and
// non-overlapping. Without overlaps it costs one O(P log k) merge walk and
// changes nothing.
func hideOverlaps(lists [][]pc) bool {
	c := newCursors(lists)
	overlap, end := false, int64(math.MinInt64)
	for c.Len() > 0 && !overlap {
		_, p := c.take(math.MaxInt64)
		overlap = p.off < end
		end = max(end, p.off+p.n)
	}
	if !overlap {
		return false
	}
	// Sweep the merged pieces keeping the covering ones in a max-heap by
	// member: the top wins until it ends or a new piece starts.
	vis := make([][]span, len(lists))
	c = newCursors(lists)
	var act activeHeap
	var x int64
	for {
		if act.Len() == 0 {
			s, ok := c.peek()
			if !ok {
				break
			}
			x = s
		}
		for s, ok := c.peek(); ok && s == x; s, ok = c.peek() {
			m, p := c.take(math.MaxInt64)
			heap.Push(&act, active{m: m, end: p.off + p.n})
		}
		for act.Len() > 0 && act.a[0].end <= x {
			heap.Pop(&act)
		}
		if act.Len() == 0 {
			continue
		}
		w := act.a[0]
		nx := w.end
		if s, ok := c.peek(); ok && s < nx {
			nx = s
		}
		v := vis[w.m]
		if len(v) > 0 && v[len(v)-1].end == x {
			v[len(v)-1].end = nx
		} else {
			vis[w.m] = append(v, span{x, nx})
		}
		x = nx
	}
	for m := range lists {
		lists[m] = splitHidden(lists[m], vis[m])
	}
	return true
}

// splitHidden cuts the pieces of l at the edges of the visible spans vis
// (sorted, disjoint, inside l's pieces) and marks the rest hidden.
func splitHidden(l []pc, vis []span) []pc {
	out := make([]pc, 0, len(l))
	vi := 0
	for _, p := range l {
		for pos, end := p.off, p.off+p.n; pos < end; {
			for vi < len(vis) && vis[vi].end <= pos {
				vi++
			}
			if vi < len(vis) && vis[vi].start <= pos {
				e := min(end, vis[vi].end)
				out = append(out, pc{off: pos, n: e - pos})
				pos = e
				continue
			}
			e := end
			if vi < len(vis) {
				e = min(end, vis[vi].start)
			}
			out = append(out, pc{off: pos, n: e - pos, hide: true})
			pos = e
		}
	}
	return out
}

// active is a piece covering the sweep position: its member and end.
type active struct {
	m   int32
	end int64
}

// activeHeap is a max-heap by member.
type activeHeap struct{ a []active }

func (h *activeHeap) Len() int           { return len(h.a) }
func (h *activeHeap) Less(i, j int) bool { return h.a[i].m > h.a[j].m }
func (h *activeHeap) Swap(i, j int)      { h.a[i], h.a[j] = h.a[j], h.a[i] }
func (h *activeHeap) Push(x any)         { h.a = append(h.a, x.(active)) }
func (h *activeHeap) Pop() any {
	v := h.a[len(h.a)-1]
	h.a = h.a[:len(h.a)-1]
	return v
}
