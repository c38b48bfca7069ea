package place

import (
	"cmp"
	"fmt"
	"slices"
)

// DefaultMinFraction is the thesis's threshold: matrix entries below 10%
// of the largest are ignored when forming sets.
const DefaultMinFraction = 0.1

// SetMatch maps the ranks onto the nodes so that the bytes each sends to
// the aggregators stay on its node where the cores allow (Venkatesan,
// chapter 3). The application matrix is the one of one aggregator per
// used node (capped by cb_nodes), node d hosting aggregator d:
//
//  1. make sets: for each aggregator, the ranks sending it at least
//     minFraction of the matrix's largest entry (smaller values are
//     ignored);
//  2. merge sets that share a rank, so that the sets are independent;
//  3. match sets to nodes (the architecture sets: the cores of a node),
//     largest set first: each rank goes to the node of its main
//     aggregator while it has free cores, then to the set's other nodes,
//     and a set that does not fit is fragmented onto the node with most
//     cores not claimed by the ranks of other sets; ranks in no set fill
//     the cores left.
//
// It tries the fewest nodes that hold the ranks and all nodes (the
// aggregator count, and so the domains, follow the nodes used).
//
// collio gives file domain d to the lowest rank of the d-th node in order
// of lowest ranks, so node d's aggregator is the one intended only when
// the nodes' lowest ranks rise with d. SetMatch therefore also matches
// under that rule (matchLed), with node d's lowest rank chosen from the
// set of aggregator d where the order allows, or ranks 0..nodes-1. Each
// mapping is then refined by moves and swaps of single ranks, and the one
// that crosses fewest bytes is returned.
func (p *Problem) SetMatch(minFraction float64) (Mapping, error) {
	if minFraction < 0 || minFraction > 1 {
		return nil, fmt.Errorf("place: SetMatch threshold %g is outside [0,1]", minFraction)
	}
	ranks, cores := len(p.Access), p.Arch.CoresPerNode
	var best Mapping
	bestCross := int64(-1)
	// The nodes used set the aggregator count (one per node), and with it
	// the file domains: both the fewest nodes that hold the ranks (as
	// byslot) and all of them (as bynode) are tried.
	for i, nodes := range []int{(ranks + cores - 1) / cores, min(p.Arch.Nodes, ranks)} {
		if i > 0 && nodes == (ranks+cores-1)/cores {
			break // the ranks fill every node
		}
		naggs := nodes
		if p.CBNodes > 0 {
			naggs = min(naggs, p.CBNodes)
		}
		mat, err := p.Matrix(naggs)
		if err != nil {
			return nil, err
		}
		sets := makeSets(mat, int64(minFraction*float64(mat.Max())))
		cands := []Mapping{
			matchSets(mat, mergeSets(sets, naggs, ranks), nodes, cores),
			matchLed(mat, leaders(mat, nodes, cores, true), nodes, cores),
			matchLed(mat, leaders(mat, nodes, cores, false), nodes, cores),
		}
		for _, cand := range cands {
			if cand, err = p.refine(cand); err != nil {
				return nil, err
			}
			c, _, err := p.Crossing(cand)
			if err != nil {
				return nil, err
			}
			if bestCross < 0 || c < bestCross {
				best, bestCross = cand, c
			}
		}
	}
	return best, nil
}

// makeSets returns, for each aggregator, the ranks sending it at least
// minValue bytes (and more than none).
func makeSets(mat *Matrix, minValue int64) [][]int {
	sets := make([][]int, len(mat.Domains))
	for r, row := range mat.Rows {
		for _, c := range row {
			if c.Bytes > 0 && c.Bytes >= minValue {
				sets[c.Agg] = append(sets[c.Agg], r)
			}
		}
	}
	return sets
}

// appSet is an independent set: its aggregators and its ranks.
type appSet struct {
	aggs  []int
	ranks []int
}

// mergeSets joins the sets that share a rank (union-find over the
// aggregators), so that every rank belongs to one set at most.
func mergeSets(sets [][]int, naggs, ranks int) []appSet {
	parent := make([]int, naggs)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	first := make([]int, ranks) // first aggregator seen with each rank, +1
	for a, set := range sets {
		for _, r := range set {
			if first[r] == 0 {
				first[r] = a + 1
				continue
			}
			if x, y := find(first[r]-1), find(a); x != y {
				parent[max(x, y)] = min(x, y)
			}
		}
	}
	index := map[int]int{}
	var out []appSet
	for a := range sets {
		root := find(a)
		i, ok := index[root]
		if !ok {
			i = len(out)
			index[root] = i
			out = append(out, appSet{})
		}
		out[i].aggs = append(out[i].aggs, a)
	}
	for r, f := range first {
		if f > 0 {
			i := index[find(f-1)]
			out[i].ranks = append(out[i].ranks, r)
		}
	}
	return out
}

// matchSets places the sets on the nodes (node d hosting aggregator d).
func matchSets(mat *Matrix, sets []appSet, nodes, cores int) Mapping {
	m := make(Mapping, mat.Ranks())
	for r := range m {
		m[r] = -1
	}
	load := make([]int, nodes)
	// claim[k]: ranks not placed yet whose main aggregator is on node k.
	claim := make([]int, nodes)
	mainAgg := mainAggs(mat)
	for _, a := range mainAgg {
		if a >= 0 && a < nodes {
			claim[a]++
		}
	}
	// mostFree is the node with free cores that has most cores left
	// unclaimed (the largest architecture set), lowest index on ties.
	mostFree := func() int {
		best := -1
		for k := range load {
			if load[k] < cores && (best < 0 || cores-load[k]-claim[k] > cores-load[best]-claim[best]) {
				best = k
			}
		}
		return best
	}
	put := func(r, k int) {
		m[r], load[k] = k, load[k]+1
		if a := mainAgg[r]; a >= 0 && a < nodes {
			claim[a]--
		}
	}
	// tryBest puts r on the node it sends most to, among those with free
	// cores; false if none has.
	tryBest := func(r int) bool {
		row := slices.Clone(mat.Rows[r])
		slices.SortStableFunc(row, func(a, b Cell) int { return cmp.Compare(b.Bytes, a.Bytes) })
		for _, c := range row {
			if c.Agg < nodes && load[c.Agg] < cores {
				put(r, c.Agg)
				return true
			}
		}
		return false
	}
	order := slices.Clone(sets)
	slices.SortStableFunc(order, func(a, b appSet) int { return cmp.Compare(len(b.ranks), len(a.ranks)) })
	for _, s := range order {
		// Heaviest senders first, so that a set too large for its nodes
		// leaves its lightest ranks to be fragmented.
		rs := slices.Clone(s.ranks)
		slices.SortStableFunc(rs, func(a, b int) int { return cmp.Compare(mainBytes(mat, b), mainBytes(mat, a)) })
		for _, r := range rs {
			if !tryBest(r) {
				put(r, mostFree())
			}
		}
	}
	for r := range m {
		if m[r] < 0 && !tryBest(r) {
			put(r, mostFree())
		}
	}
	return m
}

// mainBytes is the largest entry of rank r's row.
func mainBytes(mat *Matrix, r int) int64 {
	var most int64
	for _, c := range mat.Rows[r] {
		most = max(most, c.Bytes)
	}
	return most
}

// leaders chooses, for each node d, the rank that will be its lowest
// (collio's aggregator of domain d): rising with d, and at most d*cores
// so that the ranks below it fit the nodes before d. With bySet, node d's
// leader is the lowest such rank whose main aggregator is d, where there
// is one; otherwise (and as the fallback) the next rank.
func leaders(mat *Matrix, nodes, cores int, bySet bool) []int {
	main := mainAggs(mat)
	l := make([]int, 0, nodes)
	next := 0
	for d := 0; d < nodes && next < mat.Ranks(); d++ {
		pick := next
		if bySet {
			for r := next; r < mat.Ranks() && r <= d*cores; r++ {
				if main[r] == d {
					pick = r
					break
				}
			}
		}
		l = append(l, pick)
		next = pick + 1
	}
	return l
}

// mainAggs is each rank's main aggregator (most bytes), -1 for none.
func mainAggs(mat *Matrix) []int {
	main := make([]int, mat.Ranks())
	for r, row := range mat.Rows {
		main[r] = -1
		var most int64
		for _, c := range row {
			if c.Bytes > most {
				most, main[r] = c.Bytes, c.Agg
			}
		}
	}
	return main
}

// matchLed matches the ranks to the nodes under collio's aggregator rule:
// node d's lowest rank is lead[d], so a rank r may join node d only if
// lead[d] < r. Ranks go in increasing order (the most constrained first)
// to their main aggregator's node when allowed and free, else to the
// allowed free node they send most to, else to the allowed node with most
// cores left unclaimed by later ranks.
func matchLed(mat *Matrix, lead []int, nodes, cores int) Mapping {
	m := make(Mapping, mat.Ranks())
	load := make([]int, nodes)
	claim := make([]int, nodes)
	main := mainAggs(mat)
	isLead := map[int]bool{}
	for d, r := range lead {
		isLead[r] = true
		m[r], load[d] = d, 1
	}
	for r, a := range main {
		if !isLead[r] && a >= 0 && a < nodes {
			claim[a]++
		}
	}
	allowed := 0 // nodes 0..allowed-1 have a leader below r
	for r := range m {
		for allowed < len(lead) && lead[allowed] < r {
			allowed++
		}
		if isLead[r] {
			continue
		}
		if a := main[r]; a >= 0 && a < nodes {
			claim[a]--
		}
		best := -1
		var bestBytes int64
		for _, c := range mat.Rows[r] {
			if c.Agg < allowed && load[c.Agg] < cores && (best < 0 || c.Bytes > bestBytes) {
				best, bestBytes = c.Agg, c.Bytes
			}
		}
		if best < 0 {
			for k := range allowed {
				if load[k] < cores && (best < 0 || cores-load[k]-claim[k] > cores-load[best]-claim[best]) {
					best = k
				}
			}
		}
		m[r] = best
		load[best]++
	}
	return m
}

// refine lowers the bytes m sends across nodes by moving single ranks to
// a node with a free core, or swapping two ranks, wherever that keeps
// more of their data on node, until no move helps (at most a few passes).
// Each node's lowest rank stays, and no rank moves below another node's
// lowest, so the aggregators (and the domains) do not change.
func (p *Problem) refine(m Mapping) (Mapping, error) {
	aggs := p.Aggregators(m)
	mat, err := p.Matrix(len(aggs))
	if err != nil {
		return nil, err
	}
	m = slices.Clone(m)
	cores := p.Arch.CoresPerNode
	members := make([][]int, p.Arch.Nodes)
	for r, k := range m {
		members[k] = append(members[k], r)
	}
	lowest := make([]int, len(members))
	for k, rs := range members {
		lowest[k] = -1
		if len(rs) > 0 {
			lowest[k] = rs[0]
		}
	}
	aggNode := make([]int, len(aggs))
	for d, a := range aggs {
		aggNode[d] = m[a]
	}
	// The aggregators stay where they are, so each rank's bytes per node
	// are fixed: summed once, looked up by every move and swap.
	perNode := make([][]nodeBytes, len(mat.Rows))
	for r, row := range mat.Rows {
		for _, c := range row {
			perNode[r] = append(perNode[r], nodeBytes{aggNode[c.Agg], c.Bytes})
		}
		slices.SortFunc(perNode[r], func(a, b nodeBytes) int { return cmp.Compare(a.node, b.node) })
		merged := perNode[r][:0]
		for _, nb := range perNode[r] {
			if k := len(merged) - 1; k >= 0 && merged[k].node == nb.node {
				merged[k].bytes += nb.bytes
				continue
			}
			merged = append(merged, nb)
		}
		perNode[r] = merged
	}
	to := func(r, k int) int64 {
		row := perNode[r]
		lo, hi := 0, len(row)
		for lo < hi { // binary search by hand: the swaps call this most
			mid := int(uint(lo+hi) >> 1)
			if row[mid].node < k {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < len(row) && row[lo].node == k {
			return row[lo].bytes
		}
		return 0
	}
	// Only nodes that hold ranks can take more: an empty node would
	// change the aggregators.
	canJoin := func(r, k int) bool { return lowest[k] >= 0 && r > lowest[k] }
	move := func(r, from, to int) {
		members[from] = slices.DeleteFunc(members[from], func(x int) bool { return x == r })
		members[to] = append(members[to], r)
		m[r] = to
	}
	for pass := 0; pass < 4; pass++ {
		improved := false
		for r := range m {
			home := m[r]
			if r == lowest[home] {
				continue
			}
			stay := to(r, home)
			for _, c := range mat.Rows[r] {
				k := aggNode[c.Agg]
				if k == home || !canJoin(r, k) {
					continue
				}
				gain := to(r, k) - stay
				if gain <= 0 {
					continue
				}
				if len(members[k]) < cores {
					move(r, home, k)
					improved = true
					break
				}
				best, bestGain := -1, int64(0)
				for _, s := range members[k] {
					if s == lowest[k] || !canJoin(s, home) {
						continue
					}
					if g := gain + to(s, home) - to(s, k); g > bestGain {
						best, bestGain = s, g
					}
				}
				if best >= 0 {
					move(r, home, k)
					move(best, k, home)
					improved = true
					break
				}
			}
		}
		if !improved {
			break
		}
	}
	return m, nil
}

// nodeBytes is a rank's bytes to the aggregators of one node.
type nodeBytes struct {
	node  int
	bytes int64
}
