package place

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/segment"
	"github.com/collio/collio/topo"
)

// Arch is the machine: Nodes nodes of CoresPerNode cores each.
type Arch struct {
	Nodes, CoresPerNode int
}

// Check reports whether ranks processes fit the machine, one per core.
func (a Arch) Check(ranks int) error {
	switch {
	case a.Nodes < 1:
		return fmt.Errorf("place: %d nodes; need at least one", a.Nodes)
	case a.CoresPerNode < 1:
		return fmt.Errorf("place: %d cores per node; need at least one", a.CoresPerNode)
	case ranks < 1:
		return fmt.Errorf("place: %d ranks; need at least one", ranks)
	case ranks > a.Nodes*a.CoresPerNode:
		return fmt.Errorf("place: %d ranks do not fit %d nodes x %d cores per node (%d cores)",
			ranks, a.Nodes, a.CoresPerNode, a.Nodes*a.CoresPerNode)
	}
	return nil
}

// Mapping is a placement: Mapping[r] is the node (0..Arch.Nodes-1) rank r
// runs on.
type Mapping []int

// BySlot fills each node's cores before the next (Open MPI --map-by slot).
func BySlot(ranks int, a Arch) Mapping {
	m := make(Mapping, ranks)
	for r := range m {
		m[r] = r / a.CoresPerNode
	}
	return m
}

// ByNode deals ranks round-robin over the nodes (Open MPI --map-by node).
func ByNode(ranks int, a Arch) Mapping {
	m := make(Mapping, ranks)
	for r := range m {
		m[r] = r % a.Nodes
	}
	return m
}

// Check reports whether m places every rank on a node of a with at most
// CoresPerNode ranks per node.
func (m Mapping) Check(a Arch) error {
	load := make([]int, a.Nodes)
	for r, k := range m {
		if k < 0 || k >= a.Nodes {
			return fmt.Errorf("place: rank %d on node %d, outside [0,%d)", r, k, a.Nodes)
		}
		if load[k]++; load[k] > a.CoresPerNode {
			return fmt.Errorf("place: node %d holds more than %d ranks", k, a.CoresPerNode)
		}
	}
	return nil
}

// Nodes is the mapping as collio sees it (topo.Nodes): the used nodes
// numbered in order of their lowest rank.
func (m Mapping) Nodes() topo.Nodes {
	label := map[int]int{}
	n := topo.Nodes{Of: make([]int, len(m))}
	for r, k := range m {
		id, ok := label[k]
		if !ok {
			id = len(label)
			label[k] = id
			n.Names = append(n.Names, fmt.Sprintf("node%d", k))
		}
		n.Of[r] = id
	}
	return n
}

// Problem is one collective write to place: the ranks' accesses, the
// machine, cb_nodes (0: one aggregator per node, ROMIO's default) and the
// file-domain rule.
type Problem struct {
	Access  []Access
	Arch    Arch
	CBNodes int
	Domains Domains

	ranges   []coll.Range
	matrices map[int]*Matrix   // by aggregator count
	blocks   map[int64]*Matrix // by affinity block size
}

// NewProblem checks p's inputs and returns it ready for Crossing and
// SetMatch.
func NewProblem(acc []Access, a Arch, cbNodes int, dom Domains) (*Problem, error) {
	if err := a.Check(len(acc)); err != nil {
		return nil, err
	}
	if cbNodes < 0 {
		return nil, fmt.Errorf("place: cb_nodes %d is negative", cbNodes)
	}
	ranges, err := Ranges(acc)
	if err != nil {
		return nil, err
	}
	if _, ok := coll.Span(ranges); !ok {
		return nil, fmt.Errorf("place: no rank accesses any byte")
	}
	return &Problem{Access: acc, Arch: a, CBNodes: cbNodes, Domains: dom, ranges: ranges, matrices: map[int]*Matrix{}}, nil
}

// Matrix is the application matrix with naggs aggregators (computed once
// per count).
func (p *Problem) Matrix(naggs int) (*Matrix, error) {
	if m, ok := p.matrices[naggs]; ok {
		return m, nil
	}
	m, err := build(p.Access, p.ranges, naggs, p.Domains)
	if err != nil {
		return nil, err
	}
	p.matrices[naggs] = m
	return m, nil
}

// Aggregators returns the aggregators collio picks under mapping m (ROMIO's
// rule through topo.Aggregators, in file-domain order).
func (p *Problem) Aggregators(m Mapping) []int {
	aggs, _ := topo.Aggregators(m.Nodes(), p.CBNodes, nil)
	return aggs
}

// Crossing returns the bytes of the write that leave their rank's node
// under mapping m, and the bytes in all.
func (p *Problem) Crossing(m Mapping) (crossing, total int64, err error) {
	if len(m) != len(p.Access) {
		return 0, 0, fmt.Errorf("place: mapping of %d ranks for %d ranks", len(m), len(p.Access))
	}
	if err := m.Check(p.Arch); err != nil {
		return 0, 0, err
	}
	aggs := p.Aggregators(m)
	mat, err := p.Matrix(len(aggs))
	if err != nil {
		return 0, 0, err
	}
	for r, row := range mat.Rows {
		for _, c := range row {
			total += c.Bytes
			if m[r] != m[aggs[c.Agg]] {
				crossing += c.Bytes
			}
		}
	}
	return crossing, total, nil
}

// SegmentCrossing is Crossing for OMPIO's segmentation (package segment,
// collio_strategy=static or dynamic): the ranks form groups of
// consecutive ranks, one per aggregator (segment.Groups over the
// aggregators collio picks under m), and every rank sends all its data to
// its group's aggregator, so a rank's bytes cross nodes all or none.
func (p *Problem) SegmentCrossing(m Mapping) (crossing, total int64, err error) {
	if len(m) != len(p.Access) {
		return 0, 0, fmt.Errorf("place: mapping of %d ranks for %d ranks", len(m), len(p.Access))
	}
	if err := m.Check(p.Arch); err != nil {
		return 0, 0, err
	}
	group, leader := segment.Groups(len(m), p.Aggregators(m))
	for r, a := range p.Access {
		total += a.Size
		if m[r] != m[leader[group[r]]] {
			crossing += a.Size
		}
	}
	return crossing, total, nil
}
