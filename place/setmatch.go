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
// the nodes' lowest ranks rise with d. SetMatch therefore also builds the
// variant in which ranks 0..nodes-1 are swapped onto nodes 0..nodes-1
// (anchors, moving little data when the sets' lowest ranks are out of
// order), and returns whichever of the two crosses fewer bytes.
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
	for _, nodes := range []int{(ranks + cores - 1) / cores, min(p.Arch.Nodes, ranks)} {
		naggs := nodes
		if p.CBNodes > 0 {
			naggs = min(naggs, p.CBNodes)
		}
		mat, err := p.Matrix(naggs)
		if err != nil {
			return nil, err
		}
		sets := makeSets(mat, int64(minFraction*float64(mat.Max())))
		m := matchSets(mat, mergeSets(sets, naggs, ranks), nodes, cores)
		anchored := slices.Clone(m)
		anchor(mat, anchored, nodes, cores)
		for _, cand := range []Mapping{m, anchored} {
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
	mainAgg := make([]int, len(m))
	for r := range m {
		mainAgg[r] = -1
		var most int64
		for _, c := range mat.Rows[r] {
			if c.Bytes > most {
				most, mainAgg[r] = c.Bytes, c.Agg
			}
		}
		if a := mainAgg[r]; a >= 0 && a < nodes {
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

// bytesTo is what rank r sends to aggregator a (0 for a past the matrix).
func bytesTo(mat *Matrix, r, a int) int64 {
	for _, c := range mat.Rows[r] {
		if c.Agg == a {
			return c.Bytes
		}
	}
	return 0
}

// anchor swaps rank k onto node k for k < nodes, so that the nodes'
// lowest ranks are 0..nodes-1 in node order and collio's aggregator of
// domain k is rank k on node k. Each swap partner is the rank on node k
// (other than an anchor already placed) that loses least by moving to
// rank k's node; rank k moves alone when node k has a free core and no
// rank there gains by the swap.
func anchor(mat *Matrix, m Mapping, nodes, cores int) {
	onNode := make([][]int, nodes)
	for r, k := range m {
		onNode[k] = append(onNode[k], r)
	}
	for k := 0; k < nodes && k < len(m); k++ {
		from := m[k]
		if from == k {
			continue
		}
		best, bestGain := -1, int64(0)
		for _, y := range onNode[k] {
			if y <= k {
				continue
			}
			gain := bytesTo(mat, y, from) - bytesTo(mat, y, k)
			if best < 0 || gain > bestGain {
				best, bestGain = y, gain
			}
		}
		full := len(onNode[k]) >= cores
		onNode[from] = slices.DeleteFunc(onNode[from], func(r int) bool { return r == k })
		onNode[k] = append(onNode[k], k)
		m[k] = k
		if best >= 0 && (full || bestGain > 0) {
			onNode[k] = slices.DeleteFunc(onNode[k], func(r int) bool { return r == best })
			onNode[from] = append(onNode[from], best)
			m[best] = from
		}
	}
}
