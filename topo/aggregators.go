package topo

import (
	"fmt"

	"github.com/collio/collio/hints"
)

// defaultList is ROMIO's default cb_config_list, "*:1": one
// aggregator per node.
var defaultList = []hints.ConfigEntry{{Host: hints.AnyHost, Count: 1}}

// Aggregators picks the collective-buffering aggregators and returns them in
// file-domain order (aggs[i] owns domain i). It is pure and deterministic.
//
// Semantics are ROMIO's cb_config_list and cb_nodes:
//   - list (nil or empty: "*:1") is processed entry by entry;
//     "host:n" takes n more ranks on the node named host, "*:n" n more on
//     every node, Count hints.AllProcs ("host:*", "*:*") all remaining
//     ranks there. A rank is used at most once, so a node never gives more
//     aggregators than it has ranks. Names that match no node are ignored.
//   - cbNodes > 0 caps the number of aggregators (a cap above the number of
//     ranks is no cap, as ROMIO resets cb_nodes > nprocs to nprocs);
//     cbNodes <= 0 means no cap. The cap is consumed in entry order, and
//     within an entry naming several nodes one rank per node at a time, so
//     a cap falling inside "*:n" still spreads over the nodes.
//
// A node that gets k aggregators uses ranks spread evenly over its ranks
// (positions floor(j*size/k) in the node's ascending rank list: with 8 ranks
// and k=2, its 1st and 5th rank), not its first k, so that they do not
// crowd one socket. The result is ordered node-round-robin: the first
// aggregator of each node in node order, then the second of each, and so
// on, so that consecutive file domains fall on different nodes.
//
// When the list selects nobody (it names no existing host), Aggregators
// falls back to one aggregator per node (still capped by cbNodes) and says
// so in warning; otherwise warning is "".
func Aggregators(n Nodes, cbNodes int, list []hints.ConfigEntry) (aggs []int, warning string) {
	members := n.members()
	nprocs := 0
	for _, m := range members {
		nprocs += len(m)
	}
	if nprocs == 0 {
		return []int{}, ""
	}
	limit := nprocs
	if cbNodes > 0 && cbNodes < nprocs {
		limit = cbNodes
	}
	if len(list) == 0 {
		list = defaultList
	}
	counts := configCounts(n, members, limit, list)
	if sum(counts) == 0 {
		counts = configCounts(n, members, limit, defaultList)
		warning = fmt.Sprintf("topo: cb_config_list %q matches no host (hosts: %s); using one aggregator per node",
			hints.FormatConfigList(list), hostList(n.Names))
	}
	return roundRobin(members, counts), warning
}

// configCounts is how many aggregators each node gets from list, at most
// limit in all.
func configCounts(n Nodes, members [][]int, limit int, list []hints.ConfigEntry) []int {
	counts := make([]int, len(members))
	left := limit
	want := make([]int, len(members))
	for _, e := range list {
		if left == 0 {
			break
		}
		more := false
		for k, m := range members {
			want[k] = 0
			if e.Host != hints.AnyHost && e.Host != n.Names[k] {
				continue
			}
			free := len(m) - counts[k]
			if e.Count == hints.AllProcs || e.Count > free {
				want[k] = free
			} else if e.Count > 0 {
				want[k] = e.Count
			}
			more = more || want[k] > 0
		}
		if more {
			left -= take(counts, want, left)
		}
	}
	return counts
}

// take adds want to counts as if handing out one rank per node at a time,
// in node order, until want is spent or left ranks are handed out; it
// returns how many were handed out. Whole rounds are handed out at once:
// the first level rounds go to every node still wanting, and the next
// round only reaches the first nodes.
func take(counts, want []int, left int) int {
	total, most := 0, 0
	for _, w := range want {
		total += w
		most = max(most, w)
	}
	if total <= left {
		for k, w := range want {
			counts[k] += w
		}
		return total
	}
	given := func(level int) int {
		g := 0
		for _, w := range want {
			g += min(w, level)
		}
		return g
	}
	// The largest level with given(level) <= left; given(most) = total > left.
	lo, hi := 0, most
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if given(mid) <= left {
			lo = mid
		} else {
			hi = mid
		}
	}
	rest := left - given(lo)
	for k, w := range want {
		counts[k] += min(w, lo)
		if w > lo && rest > 0 {
			counts[k]++
			rest--
		}
	}
	return left
}

// spread returns the positions of k ranks spread evenly among size
// (0 < k <= size): floor(j*size/k) for j = 0..k-1.
func spread(size, k int) []int {
	pos := make([]int, k)
	for j := range pos {
		pos[j] = j * size / k
	}
	return pos
}

// roundRobin places counts[k] aggregators on each node, spread within the
// node, and interleaves the nodes.
func roundRobin(members [][]int, counts []int) []int {
	picks := make([][]int, len(members))
	total, rounds := 0, 0
	for k, c := range counts {
		for _, p := range spread(len(members[k]), c) {
			picks[k] = append(picks[k], members[k][p])
		}
		total += c
		rounds = max(rounds, c)
	}
	aggs := make([]int, 0, total)
	for j := range rounds {
		for k := range picks {
			if j < len(picks[k]) {
				aggs = append(aggs, picks[k][j])
			}
		}
	}
	return aggs
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// hostList names the hosts for a warning, abbreviated past a few.
func hostList(names []string) string {
	const shown = 4
	s := ""
	for i, name := range names {
		if i == shown {
			return s + fmt.Sprintf(", ... (%d in all)", len(names))
		}
		if i > 0 {
			s += ","
		}
		s += name
	}
	return s
}
