// Package topo knows the machine layout of a communicator: which ranks share
// a node (Discover, Virtual) and which ranks act as aggregators, both for
// ROMIO-style collective buffering (Aggregators: cb_nodes, cb_config_list)
// and for the intra-node first layer of two-layer aggregation
// (LocalAggregators).
//
// Everything except Discover is pure and deterministic, so every rank that
// holds the same Nodes computes the same answers without communicating.
package topo

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"github.com/collio/collio/internal/comm"
)

// Nodes says which node each rank of a communicator runs on.
type Nodes struct {
	Of    []int    // Of[rank] = node index, nodes numbered in order of their lowest rank
	Names []string // Names[node] = host name (MPI processor name; "vnode<k>" for virtual nodes)
}

// Count is the number of nodes.
func (n Nodes) Count() int { return len(n.Names) }

// Ranks returns the ranks on node, ascending (nil for a node out of range).
func (n Nodes) Ranks(node int) []int {
	if node < 0 || node >= n.Count() {
		return nil
	}
	var ranks []int
	for r, k := range n.Of {
		if k == node {
			ranks = append(ranks, r)
		}
	}
	return ranks
}

// members lists the ranks of every node, ascending; ranks whose node is
// out of range belong to none.
func (n Nodes) members() [][]int {
	m := make([][]int, n.Count())
	for r, k := range n.Of {
		if k >= 0 && k < len(m) {
			m[k] = append(m[k], r)
		}
	}
	return m
}

// Validate checks that n is well formed: every rank on a node in range,
// every node non-empty, nodes numbered in order of their lowest rank.
// Discover and Virtual always return valid Nodes.
func (n Nodes) Validate() error {
	next := 0
	for r, k := range n.Of {
		switch {
		case k < 0 || k >= n.Count():
			return fmt.Errorf("topo: rank %d on node %d, out of range [0,%d)", r, k, n.Count())
		case k > next:
			return fmt.Errorf("topo: rank %d on node %d before node %d has a rank", r, k, next)
		case k == next:
			next++
		}
	}
	if next != n.Count() {
		return fmt.Errorf("topo: node %d has no rank", next)
	}
	return nil
}

// Virtual builds Nodes for size ranks grouped into nodes of nodeSize
// consecutive ranks (the last node may be smaller), named "vnode<k>".
// nodeSize <= 0 or >= size gives one node; size <= 0 gives no ranks.
func Virtual(size, nodeSize int) Nodes {
	if size <= 0 {
		return Nodes{Of: []int{}, Names: []string{}}
	}
	if nodeSize <= 0 || nodeSize > size {
		nodeSize = size
	}
	count := (size + nodeSize - 1) / nodeSize
	n := Nodes{Of: make([]int, size), Names: make([]string, count)}
	for r := range n.Of {
		n.Of[r] = r / nodeSize
	}
	for k := range n.Names {
		n.Names[k] = vnodeName(k)
	}
	return n
}

func vnodeName(k int) string { return "vnode" + strconv.Itoa(k) }

// processorNamer is the optional interface through which a communicator
// reports the MPI processor name of the calling rank.
type processorNamer interface {
	ProcessorName() (string, error)
}

// Discover finds the nodes of c. It is collective: every rank of c must
// call it, with the same nodeSize, and every rank gets the same Nodes.
//
//   - nodeSize > 0 (the collio_node_size hint) groups consecutive ranks into
//     virtual nodes of nodeSize ranks, ignoring the real placement, so that
//     node-aware strategies can be exercised on one machine. No
//     communication.
//   - An in-memory communicator (comm.NodeOf) uses its virtual nodes, named
//     "vnode<k>" after the world's virtual node k.
//   - A communicator with a method ProcessorName() (string, error) (also
//     behind Unwrap wrappers) groups ranks by processor name, as ROMIO does.
//   - Any other communicator groups ranks by SplitNode. Nodes are named by
//     the host names of their ranks (os.Hostname, what MPI implementations
//     report as processor name) when those agree with the grouping (one name
//     per node, distinct across nodes), else "node<k>".
//
// Failures of a rank to find its name or node are reported on every rank.
func Discover(c comm.Comm, nodeSize int) (Nodes, error) {
	if c == nil {
		return Nodes{}, fmt.Errorf("topo: no communicator")
	}
	if nodeSize > 0 {
		return Virtual(c.Size(), nodeSize), nil
	}
	if node, ok := comm.NodeOf(c); ok {
		return discoverVirtual(c, node)
	}
	if pn, ok := comm.As[processorNamer](c); ok {
		return discoverByName(c, pn)
	}
	return discoverBySplit(c)
}

// discoverVirtual gathers the in-memory world's virtual node of every rank.
func discoverVirtual(c comm.Comm, node int) (Nodes, error) {
	ids, err := allgatherInt(c, int64(node))
	if err != nil {
		return Nodes{}, fmt.Errorf("topo: gathering virtual nodes: %w", err)
	}
	keys := make([]string, len(ids))
	for r, id := range ids {
		if id < 0 {
			return Nodes{}, fmt.Errorf("topo: rank %d reports virtual node %d", r, id)
		}
		keys[r] = vnodeName(int(id))
	}
	return group(keys), nil
}

// discoverByName gathers processor names and groups equal names.
func discoverByName(c comm.Comm, pn processorNamer) (Nodes, error) {
	name, err := pn.ProcessorName()
	if err == nil && name == "" {
		err = fmt.Errorf("empty processor name")
	}
	names, bad, gerr := allgatherNames(c, name, err == nil)
	if gerr != nil {
		return Nodes{}, fmt.Errorf("topo: gathering processor names: %w", gerr)
	}
	if bad >= 0 {
		if bad == c.Rank() {
			return Nodes{}, fmt.Errorf("topo: processor name of rank %d: %w", bad, err)
		}
		return Nodes{}, fmt.Errorf("topo: rank %d could not get its processor name", bad)
	}
	return group(names), nil
}

// discoverBySplit groups the ranks by SplitNode: each node is identified by
// its lowest rank in c (its leader), which every rank learns from its node
// communicator and then shares with all.
func discoverBySplit(c comm.Comm) (Nodes, error) {
	leader, lerr := nodeLeader(c)
	if lerr != nil {
		leader = -1
	}
	leaders, err := allgatherInt(c, int64(leader))
	if err != nil {
		return Nodes{}, fmt.Errorf("topo: gathering node leaders: %w", err)
	}
	keys := make([]string, len(leaders))
	for r, l := range leaders {
		switch {
		case l < 0 && r == c.Rank():
			return Nodes{}, fmt.Errorf("topo: node of rank %d: %w", r, lerr)
		case l < 0:
			return Nodes{}, fmt.Errorf("topo: rank %d could not find its node", r)
		case l > int64(r) || leaders[l] != l:
			return Nodes{}, fmt.Errorf("topo: rank %d reports node leader %d, inconsistent", r, l)
		}
		keys[r] = strconv.FormatInt(l, 10)
	}
	n := group(keys)

	// Name the nodes after their hosts if the host names fit the grouping.
	host, herr := os.Hostname()
	hosts, bad, err := allgatherNames(c, host, herr == nil && host != "")
	if err != nil {
		return Nodes{}, fmt.Errorf("topo: gathering host names: %w", err)
	}
	if bad < 0 && hostsFit(n, hosts) {
		for r, k := range n.Of {
			n.Names[k] = hosts[r]
		}
	} else {
		for k := range n.Names {
			n.Names[k] = "node" + strconv.Itoa(k)
		}
	}
	return n, nil
}

// nodeLeader is the lowest rank in c among the ranks sharing this rank's node.
func nodeLeader(c comm.Comm) (int, error) {
	nc, err := c.SplitNode()
	if err != nil {
		return -1, err
	}
	if nc == nil {
		return -1, fmt.Errorf("SplitNode gave no communicator")
	}
	defer func() { _ = nc.Free() }()
	v := []int64{int64(c.Rank())}
	if err := nc.AllreduceInt64(v, v, comm.OpMin); err != nil {
		return -1, err
	}
	return int(v[0]), nil
}

// hostsFit reports whether the ranks of each node share one host name and
// different nodes have different host names.
func hostsFit(n Nodes, hosts []string) bool {
	hostOf := make([]string, n.Count())
	named := make([]bool, n.Count())
	nodeOf := make(map[string]int)
	for r, k := range n.Of {
		h := hosts[r]
		if named[k] {
			if hostOf[k] != h {
				return false
			}
			continue
		}
		if _, taken := nodeOf[h]; taken {
			return false
		}
		hostOf[k], named[k], nodeOf[h] = h, true, k
	}
	return true
}

// group numbers the distinct keys in order of their lowest rank; the keys
// become the node names.
func group(keys []string) Nodes {
	n := Nodes{Of: make([]int, len(keys)), Names: []string{}}
	index := make(map[string]int)
	for r, key := range keys {
		k, ok := index[key]
		if !ok {
			k = len(n.Names)
			index[key] = k
			n.Names = append(n.Names, key)
		}
		n.Of[r] = k
	}
	return n
}

// allgatherInt gathers one int64 from every rank.
func allgatherInt(c comm.Comm, v int64) ([]int64, error) {
	send := binary.LittleEndian.AppendUint64(nil, uint64(v))
	recv := make([]byte, 8*c.Size())
	if err := c.Allgather(send, recv); err != nil {
		return nil, err
	}
	out := make([]int64, c.Size())
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(recv[8*i:]))
	}
	return out, nil
}

// allgatherNames gathers one string from every rank. A rank with ok false
// has no name; bad is the lowest such rank (-1 if none), and then no names
// are gathered, so all ranks agree on the outcome.
func allgatherNames(c comm.Comm, name string, ok bool) (names []string, bad int, err error) {
	length := int64(len(name))
	if !ok {
		length = -1
	}
	lengths, err := allgatherInt(c, length)
	if err != nil {
		return nil, -1, err
	}
	counts := make([]int, len(lengths))
	displs := make([]int, len(lengths))
	total := 0
	for r, l := range lengths {
		if l < 0 {
			return nil, r, nil
		}
		counts[r], displs[r] = int(l), total
		total += int(l)
	}
	recv := make([]byte, total)
	if err := c.Allgatherv([]byte(name), recv, counts, displs); err != nil {
		return nil, -1, err
	}
	names = make([]string, len(lengths))
	for r := range names {
		names[r] = string(recv[displs[r] : displs[r]+counts[r]])
	}
	return names, -1, nil
}
