package place

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/twophase"
)

// AffinityCrossing is Crossing for collio's affinity domains (two-phase's
// default where they apply, collio_file_domains=affinity): the span is
// cut into blocks, each block goes to the aggregator of the rank that
// writes most of it, or to an aggregator on that rank's node, within a
// quota (twophase.PlanAffinity, the engine's own decision); where that
// would still move more than half of the bytes, or the blocks do not
// apply (twophase.AffinityBlockSize), two-phase falls back to ROMIO's
// domains and so does this (affinity false). bufSize is cb_buffer_size.
func (p *Problem) AffinityCrossing(m Mapping, bufSize int64) (crossing, total int64, affinity bool, err error) {
	if len(m) != len(p.Access) {
		return 0, 0, false, fmt.Errorf("place: mapping of %d ranks for %d ranks", len(m), len(p.Access))
	}
	if err := m.Check(p.Arch); err != nil {
		return 0, 0, false, err
	}
	if bufSize < 1 {
		return 0, 0, false, fmt.Errorf("place: cb_buffer_size %d", bufSize)
	}
	aggs := p.Aggregators(m)
	span, _ := coll.Span(p.ranges)
	block := twophase.AffinityBlockSize(span, len(aggs), bufSize, p.Domains.Stripe)
	if block == 0 {
		crossing, total, err = p.Crossing(m)
		return crossing, total, false, err
	}
	blocks, err := p.blockMatrix(span, block)
	if err != nil {
		return 0, 0, false, err
	}
	keys := make([]int64, len(blocks.Domains))
	for r, row := range blocks.Rows {
		for _, c := range row {
			keys[c.Agg] = max(keys[c.Agg], twophase.OwnerKey(c.Bytes, r))
			total += c.Bytes
		}
	}
	nodes := m.Nodes()
	var nodeOf []int
	if nodes.Count() > 1 { // as adio: no node layout on one node
		nodeOf = nodes.Of
	}
	plan, ok := twophase.PlanAffinity(span, block, keys, aggs, nodeOf, len(m), total)
	if !ok {
		crossing, total, err = p.Crossing(m)
		return crossing, total, false, err
	}
	owner := make([]int, len(keys))
	for a, d := range plan.Doms {
		for _, b := range d {
			owner[b] = a
		}
	}
	for r, row := range blocks.Rows {
		for _, c := range row {
			if m[r] != m[aggs[owner[c.Agg]]] {
				crossing += c.Bytes
			}
		}
	}
	return crossing, total, true, nil
}

// blockMatrix is the bytes every rank has in each block of span, kept
// per block size.
func (p *Problem) blockMatrix(span coll.Range, block int64) (*Matrix, error) {
	if m, ok := p.blocks[block]; ok {
		return m, nil
	}
	ranges := make([]coll.Range, twophase.Blocks(span, block))
	for i := range ranges {
		ranges[i] = twophase.BlockRange(span, block, i)
	}
	m, err := over(p.Access, p.ranges, ranges)
	if err != nil {
		return nil, err
	}
	if p.blocks == nil {
		p.blocks = map[int64]*Matrix{}
	}
	p.blocks[block] = m
	return m, nil
}
