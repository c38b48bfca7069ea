package topo

import "slices"

// DefaultLocalTotal is TAM's default total number of local aggregators
// (ROMIO_TOTAL_LOCAL_AGGREGATOR_DEFAULT): with perNode unset, each node gets
// ceil(DefaultLocalTotal / nodes).
const DefaultLocalTotal = 512

// Local is the first layer of two-layer (TAM) aggregation: the ranks that
// gather their node's data, and which of them each rank sends to.
type Local struct {
	Aggs []int // local aggregators, ascending
	Bind []int // Bind[rank] = the local aggregator rank sends to (itself for an aggregator)
}

// Members returns the ranks bound to local aggregator agg, ascending
// (including agg itself; nil if agg is not a local aggregator).
func (l Local) Members(agg int) []int {
	var ranks []int
	for r, a := range l.Bind {
		if a == agg {
			ranks = append(ranks, r)
		}
	}
	return ranks
}

// LocalAggregators chooses perNode local aggregators on each node (perNode
// <= 0: ceil(DefaultLocalTotal / nodes); always at least 1 and at most the
// node's rank count), evenly spaced among the node's ranks in ascending
// order, at positions floor(j*size/k). Each rank is bound to the nearest
// local aggregator at or before its position on its node, so every node's
// ranks form contiguous groups (in the node's rank order) whose sizes differ
// by at most one, each led by its aggregator. Pure and deterministic.
// A rank whose node is out of range (invalid Nodes) is bound to -1.
func LocalAggregators(n Nodes, perNode int) Local {
	if perNode <= 0 {
		perNode = 1
		if c := n.Count(); c > 0 {
			perNode = max(1, (DefaultLocalTotal+c-1)/c)
		}
	}
	l := Local{Aggs: []int{}, Bind: make([]int, len(n.Of))}
	for r := range l.Bind {
		l.Bind[r] = -1
	}
	for _, m := range n.members() {
		if len(m) == 0 {
			continue
		}
		k := min(perNode, len(m))
		pos := spread(len(m), k)
		for j, p := range pos {
			end := len(m)
			if j+1 < k {
				end = pos[j+1]
			}
			for _, r := range m[p:end] {
				l.Bind[r] = m[p]
			}
			l.Aggs = append(l.Aggs, m[p])
		}
	}
	slices.Sort(l.Aggs)
	return l
}
