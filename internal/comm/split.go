package comm

import (
	"cmp"
	"slices"
)

// splitResult is where one old rank lands after a split: nil group for a
// negative color.
type splitResult struct {
	g    *group
	rank int
}

func (c *memComm) Split(color, key int) (Comm, error) {
	return c.split(kindSplit, "Split", color, key)
}

// SplitNode groups the ranks of this rank's virtual node. Nodes are a
// property of world ranks, so nested splits keep node identity.
func (c *memComm) SplitNode() (Comm, error) {
	return c.split(kindSplitNode, "SplitNode", c.g.world.nodeOf(c.worldRank()), c.rank)
}

// Dup makes a new group with the same ranks: new mailboxes and a new
// rendezvous, so nothing on it matches the original.
func (c *memComm) Dup() (Comm, error) {
	return c.split(kindDup, "Dup", 0, c.rank)
}

func (c *memComm) split(k collKind, name string, color, key int) (Comm, error) {
	var mine splitResult
	err := c.collective(name, deposit{kind: k, color: color, key: key}, func(op *collOp) error {
		mine = op.splits[c.rank]
		return nil
	})
	if err != nil || mine.g == nil {
		return nil, err
	}
	return &memComm{g: mine.g, rank: mine.rank}, nil
}

// splitGroups makes one group per non-negative color, ordered by key then
// old rank, and tells every old rank where it landed.
func splitGroups(parent *group, deps []deposit) []splitResult {
	byColor := map[int][]int{} // color -> old ranks
	var colors []int
	for r, d := range deps {
		if d.color < 0 {
			continue
		}
		if _, ok := byColor[d.color]; !ok {
			colors = append(colors, d.color)
		}
		byColor[d.color] = append(byColor[d.color], r)
	}
	out := make([]splitResult, len(deps))
	for _, color := range colors {
		olds := byColor[color]
		slices.SortStableFunc(olds, func(a, b int) int { return cmp.Compare(deps[a].key, deps[b].key) })
		members := make([]int, len(olds))
		for i, old := range olds {
			members[i] = parent.members[old]
		}
		g := parent.world.newGroup(members)
		for i, old := range olds {
			out[old] = splitResult{g: g, rank: i}
		}
	}
	return out
}
