package twophase

import (
	"slices"

	"github.com/collio/collio/internal/coll"
)

// Affinity file domains: the span is cut into fixed blocks, and each block
// goes to the aggregator that writes (or reads) the most of its bytes, so
// data that one rank owns block after block never leaves that rank. ROMIO
// splits the span into equal contiguous domains whatever the data layout:
// with a coll_perf array on a 2x2 process grid, half of every rank's data
// then crosses to another aggregator though each rank owns whole 512 KiB
// runs. Blocks still have exactly one aggregator, so writes never share a
// block and read-modify-write stays safe; blocks where an aggregator has
// no majority keep ROMIO's even split. The planning here is pure: the
// engine gathers the owners (one Allreduce) and calls these functions.

// Block sizes: at least minAffinityBlock (smaller runs are cheaper to move
// than to write alone), doubled until the span has at most
// maxAffinityBlocks (the Allreduce carries 8 bytes per block).
const (
	minAffinityBlock  = 64 << 10
	maxAffinityBlocks = 8192
)

// AffinityBlockSize is the block size for affinity domains over span (a
// multiple of stripe when stripe > 0, so no two aggregators share a
// stripe), or 0 when they do not apply: fewer than two aggregators, a
// block larger than the collective buffer (an aggregator's round holds
// whole blocks), or a span under two blocks per aggregator.
func AffinityBlockSize(span coll.Range, naggs int, bufSize, stripe int64) int64 {
	if naggs < 2 || span.Empty() {
		return 0
	}
	b := int64(minAffinityBlock)
	if stripe > 0 {
		b = stripe * ((b + stripe - 1) / stripe)
	}
	for span.Len()/b > maxAffinityBlocks {
		b *= 2
	}
	if b > bufSize || span.Len() < 2*int64(naggs)*b {
		return 0
	}
	return b
}

// Blocks is the number of blocks of size block that meet span; block i
// is [(first+i)*block, (first+i+1)*block) cut to span, first =
// span.Start/block (blocks are aligned to the file, not to the span).
func Blocks(span coll.Range, block int64) int {
	if span.Empty() || block <= 0 {
		return 0
	}
	return int((span.End-1)/block - span.Start/block + 1)
}

// BlockRange is block i of span (see Blocks).
func BlockRange(span coll.Range, block int64, i int) coll.Range {
	s := (span.Start/block + int64(i)) * block
	return coll.Range{Start: max(s, span.Start), End: min(s+block, span.End)}
}

// OwnerKey encodes a rank's byte count in a block so that the maximum
// over ranks names the rank with the most bytes, the lowest rank on ties,
// and 0 means no bytes. Ranks must be below 1<<20.
func OwnerKey(bytes int64, rank int) int64 {
	if bytes <= 0 {
		return 0
	}
	return bytes<<20 | int64(1<<20-1-rank)
}

// KeyOwner decodes OwnerKey's maximum: the rank, or -1 for no bytes.
func KeyOwner(key int64) int {
	if key <= 0 {
		return -1
	}
	return 1<<20 - 1 - int(key&(1<<20-1))
}

// AffinityDomains assigns each block of span to an aggregator: aggOf[r] is
// the aggregator index that takes the blocks rank r writes most of (its
// own, or one on its node; -1 for none), owners[i] the rank with most
// bytes in block i (or -1 when nobody touches it). A block goes to its
// owner's aggregator when that has fewer than its quota of
// blocks (one and a half times an even share of the blocks with data, so
// one heavy rank cannot end up doing all the I/O); any other block with
// data goes to the aggregator whose even domain (FileDomains) holds its
// start. It returns each aggregator's block indices in file order (blocks
// without data are nobody's) and how many blocks stayed with their owner.
func AffinityDomains(span coll.Range, block int64, owners, aggOf []int, naggs int) (doms [][]int32, c BlockCount) {
	doms = make([][]int32, naggs)
	if naggs <= 0 {
		return doms, c
	}
	for _, o := range owners {
		if o >= 0 {
			c.WithData++
		}
	}
	fair := (c.WithData + naggs - 1) / naggs
	quota := fair + (fair+1)/2
	even := FileDomains(span, naggs, 0, 0)
	next := 0 // the even domain of the current block, found by walking forward
	for i, o := range owners {
		if o < 0 {
			continue
		}
		if a := aggOf[o]; a >= 0 && len(doms[a]) < quota {
			doms[a] = append(doms[a], int32(i))
			c.Kept++
			continue
		}
		start := BlockRange(span, block, i).Start
		for next < naggs-1 && start >= even[next].End {
			next++
		}
		doms[next] = append(doms[next], int32(i))
	}
	return doms, c
}

// BlockCount says how affinity domains came out: blocks with data, and
// those assigned to the rank with most bytes in them.
type BlockCount struct{ WithData, Kept int }

// AffinityRounds is the number of rounds when each aggregator handles at
// most perRound of its blocks per round.
func AffinityRounds(doms [][]int32, perRound int) int {
	n := 0
	for _, d := range doms {
		n = max(n, (len(d)+perRound-1)/perRound)
	}
	return n
}

// AffinityWindow appends to buf the file ranges of round m of domain d:
// its blocks m*perRound ... (m+1)*perRound-1, consecutive blocks merged.
func AffinityWindow(buf []coll.Range, span coll.Range, block int64, d []int32, m, perRound int) []coll.Range {
	lo := m * perRound
	if lo >= len(d) {
		return buf
	}
	for _, b := range d[lo:min(len(d), lo+perRound)] {
		r := BlockRange(span, block, int(b))
		if n := len(buf); n > 0 && buf[n-1].End == r.Start {
			buf[n-1].End = r.End
			continue
		}
		buf = append(buf, r)
	}
	return buf
}

// AffinityPlan is how affinity domains came out of PlanAffinity.
type AffinityPlan struct {
	Doms   [][]int32 // each aggregator's blocks (AffinityDomains)
	Count  BlockCount
	ByNode bool // some rank's blocks went to an aggregator on its node
	// Of the call's bytes: those left where the rank that writes most of
	// their block is (Home), those at that rank or on its node (Kept),
	// and the rest, which would move (Moved).
	Home, Kept, Moved int64
}

// PlanAffinity is the pure part of affinity planning: keys[i] is the
// maximum OwnerKey over the ranks of block i of span, aggs the
// aggregators, nodeOf the node of each of the size ranks (nil: unknown)
// and total the call's bytes. It reports false, leaving the plan to
// ROMIO's rule, when more than half of the bytes would still cross
// ranks: scattered blocks mean more and smaller writes, worth it only
// where most data stays home (ROMIO's domains move (n-1)/n of the data of
// n aggregators on most layouts).
func PlanAffinity(span coll.Range, block int64, keys []int64, aggs, nodeOf []int, size int, total int64) (AffinityPlan, bool) {
	var p AffinityPlan
	owners := make([]int, len(keys))
	for i, k := range keys {
		owners[i] = KeyOwner(k)
	}
	aggOf := aggIndex(aggs, size)
	target, byNode := BlockTargets(aggOf, aggs, nodeOf)
	p.Doms, p.Count = AffinityDomains(span, block, owners, target, len(aggs))
	p.ByNode = byNode
	// The bytes that stay with their writer (or, byNode, its node): the
	// main writer's bytes in each block its aggregator got.
	for a, d := range p.Doms {
		for _, b := range d {
			if o := owners[b]; target[o] == a {
				p.Kept += keys[b] >> 20
				if aggs[a] == o {
					p.Home += keys[b] >> 20
				}
			}
		}
	}
	p.Moved = max(total-p.Kept, 0)
	return p, 2*p.Moved <= total
}

// BlockTargets says which aggregator takes the blocks each rank writes
// most of: its own index when it aggregates (aggOf[r], else -1);
// otherwise, with nodeOf, an aggregator on its node (spread by rank when
// there are several), so its data crosses shared memory rather than the
// network; else -1 (ROMIO's domain decides). byNode reports whether any
// rank got a node's aggregator.
func BlockTargets(aggOf, aggs, nodeOf []int) (target []int, byNode bool) {
	target = slices.Clone(aggOf)
	if len(nodeOf) != len(aggOf) {
		return target, false
	}
	onNode := map[int][]int{}
	for i, a := range aggs {
		onNode[nodeOf[a]] = append(onNode[nodeOf[a]], i)
	}
	for r := range target {
		if as := onNode[nodeOf[r]]; target[r] < 0 && len(as) > 0 {
			target[r], byNode = as[r%len(as)], true
		}
	}
	return target, byNode
}
