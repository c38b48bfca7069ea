package vcluster

import (
	"fmt"
	"strconv"
	"strings"
)

// LinkBytes is what crossed a node's link: bytes the node sent and
// received.
type LinkBytes struct {
	Node     string
	Sent     int64
	Received int64
}

// Counters reads every node's link counters.
func Counters(p Plan) ([]LinkBytes, error) {
	var out []LinkBytes
	for _, n := range p.Nodes {
		rx, err := linkCounter(n, "rx_bytes")
		if err != nil {
			return nil, err
		}
		tx, err := linkCounter(n, "tx_bytes")
		if err != nil {
			return nil, err
		}
		out = append(out, LinkBytes{Node: n.Name, Sent: tx, Received: rx})
	}
	return out, nil
}

// linkCounter reads one statistic of the node's eth0 inside its
// network namespace (ip netns exec mounts that namespace's sysfs).
func linkCounter(n Node, stat string) (int64, error) {
	out, err := runner{}.run("ip", "netns", "exec", n.NetNS, "cat", "/sys/class/net/eth0/statistics/"+stat)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("vcluster: %s's %s: %v", n.Name, stat, err)
	}
	return v, nil
}

// Delta is after minus before, node by node.
func Delta(before, after []LinkBytes) []LinkBytes {
	out := make([]LinkBytes, len(after))
	for i, a := range after {
		out[i] = a
		if i < len(before) && before[i].Node == a.Node {
			out[i].Sent -= before[i].Sent
			out[i].Received -= before[i].Received
		}
	}
	return out
}

// FormatCounters renders link bytes as TSV with a header.
func FormatCounters(c []LinkBytes) string {
	var b strings.Builder
	b.WriteString("node\tsent_bytes\treceived_bytes\n")
	for _, l := range c {
		fmt.Fprintf(&b, "%s\t%d\t%d\n", l.Node, l.Sent, l.Received)
	}
	return b.String()
}
