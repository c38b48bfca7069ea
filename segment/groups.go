package segment

import (
	"fmt"
	"slices"

	"github.com/collio/collio/internal/coll"
)

// Groups partitions ranks 0..n-1 into len(aggs) groups of consecutive
// ranks, one per aggregator, each aggregator inside its own group.
//
// Rule: groups are numbered in rank order and leader is aggs sorted
// (leader[g] aggregates group g). The boundary between groups g and g+1
// is the even split point (g+1)*n/len(aggs), clamped into
// (leader[g], leader[g+1]] so that each leader stays in its group. With
// aggregators evenly spaced (rank i*n/k, OMPIO's and twophase's default
// placement) the groups are the blocks [i*n/k, (i+1)*n/k), sizes within one
// of each other; with aggregators bunched together the groups between
// them are as small as the clamping forces (aggregators 0 and 1 of 8
// ranks give groups {0} and {1..7}).
//
// aggs must hold between 1 and n distinct ranks in [0, n); Groups panics
// otherwise (Write and Read check first and return an error).
func Groups(n int, aggs []int) (group []int, leader []int) {
	if err := checkAggs(n, aggs); err != nil {
		panic(err)
	}
	k := len(aggs)
	leader = slices.Sorted(slices.Values(aggs))
	group = make([]int, n)
	start := 0
	for g := range k {
		end := n
		if g+1 < k {
			end = min(max((g+1)*n/k, leader[g]+1), leader[g+1])
		}
		for r := start; r < end; r++ {
			group[r] = g
		}
		start = end
	}
	return group, leader
}

// checkAggs validates an aggregator list for n ranks.
func checkAggs(n int, aggs []int) error {
	if err := coll.CheckAggregators(n, aggs); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	return nil
}
