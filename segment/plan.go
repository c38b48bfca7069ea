package segment

import (
	"cmp"
	"container/heap"
	"math"
	"slices"

	"github.com/collio/collio/internal/coll"
)

// seg is a piece of one cycle: file bytes [off, off+n) of member m, whose
// data is at [at, at+n) of that member's chunk for the cycle.
type seg struct {
	off, n int64
	at     int64
	m      int32
	hide   bool
}

// hidden reports whether piece idx of member m is hidden: its bytes are
// also written by a higher-ranked member of the group, so they are still
// shipped (they are part of the member's data stream) but not written,
// and each byte is written once, by its highest-ranked writer. hide is nil
// when no bytes overlap.
func hidden(hide [][]bool, m, idx int) bool { return hide != nil && hide[m][idx] }

// planner fills a cycle's segments and per-member counts.
type planner interface {
	plan(cy *cycle)
}

// dynamicPlan is dynamic segmentation: each cycle takes the next budget
// bytes of the group's merged pieces in file order, whoever they belong
// to, cutting a piece at the cycle edge. The segments come out sorted.
type dynamicPlan struct {
	c      *coll.Merger
	hide   [][]bool
	budget int64
}

func newDynamicPlan(lists [][]coll.Extent, hide [][]bool, budget int64) *dynamicPlan {
	d := &dynamicPlan{c: new(coll.Merger), hide: hide, budget: budget}
	d.c.Reset(lists, nil)
	return d
}

func (d *dynamicPlan) plan(cy *cycle) {
	cy.reset()
	for left := d.budget; left > 0 && d.c.Len() > 0; {
		p, idx := d.c.Take(left)
		m := p.Src
		cy.segs = append(cy.segs, seg{off: p.Off, n: p.N, at: cy.counts[m], m: int32(m), hide: hidden(d.hide, m, idx)})
		cy.counts[m] += p.N
		left -= p.N
	}
}

// staticPlan is static segmentation: in each cycle every member
// contributes the next share bytes of its own data stream (fewer at its
// end); the cycle's segments are then sorted by file offset.
type staticPlan struct {
	lists [][]coll.Extent
	hide  [][]bool
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
			n := min(cur.N-u, left)
			cy.segs = append(cy.segs, seg{off: cur.Off + u, n: n, at: cy.counts[m], m: int32(m), hide: hidden(s.hide, m, s.next[m])})
			cy.counts[m] += n
			left -= n
			if u+n == cur.N {
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

// hideOverlaps finds, in the members' lists, the bytes that a
// higher-ranked member also writes, splitting pieces where needed, and
// returns each piece's hidden flag (nil when no bytes overlap: the lists
// are then unchanged). Each list must be sorted and non-overlapping.
// Without overlaps it costs one O(P log k) merge walk.
func hideOverlaps(lists [][]coll.Extent) [][]bool {
	var c coll.Merger
	c.Reset(lists, nil)
	overlap, end := false, int64(math.MinInt64)
	for c.Len() > 0 && !overlap {
		p, _ := c.Take(math.MaxInt64)
		overlap = p.Off < end
		end = max(end, p.End())
	}
	if !overlap {
		return nil
	}
	// Sweep the merged pieces keeping the covering ones in a max-heap by
	// member: the top wins until it ends or a new piece starts.
	vis := make([][]span, len(lists))
	c.Reset(lists, nil)
	var act activeHeap
	var x int64
	for {
		if act.Len() == 0 {
			s, ok := c.Peek()
			if !ok {
				break
			}
			x = s
		}
		for s, ok := c.Peek(); ok && s == x; s, ok = c.Peek() {
			p, _ := c.Take(math.MaxInt64)
			heap.Push(&act, active{m: int32(p.Src), end: p.End()})
		}
		for act.Len() > 0 && act.a[0].end <= x {
			heap.Pop(&act)
		}
		if act.Len() == 0 {
			continue
		}
		w := act.a[0]
		nx := w.end
		if s, ok := c.Peek(); ok && s < nx {
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
	hide := make([][]bool, len(lists))
	for m := range lists {
		lists[m], hide[m] = splitHidden(lists[m], vis[m])
	}
	return hide
}

// splitHidden cuts the pieces of l at the edges of the visible spans vis
// (sorted, disjoint, inside l's pieces) and flags the rest hidden.
func splitHidden(l []coll.Extent, vis []span) ([]coll.Extent, []bool) {
	out := make([]coll.Extent, 0, len(l))
	hide := make([]bool, 0, len(l))
	vi := 0
	for _, p := range l {
		for pos, end := p.Off, p.End(); pos < end; {
			for vi < len(vis) && vis[vi].end <= pos {
				vi++
			}
			if vi < len(vis) && vis[vi].start <= pos {
				e := min(end, vis[vi].end)
				out, hide = append(out, coll.Extent{Off: pos, N: e - pos}), append(hide, false)
				pos = e
				continue
			}
			e := end
			if vi < len(vis) {
				e = min(end, vis[vi].start)
			}
			out, hide = append(out, coll.Extent{Off: pos, N: e - pos}), append(hide, true)
			pos = e
		}
	}
	return out, hide
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
