package vcluster

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// SeqHostfile turns an Open MPI rankfile ("rank N=HOST slot=S" lines, as
// collio place writes) into a hostfile naming each rank's host in rank
// order, for mpirun's sequential mapper (--mca rmaps seq). An emulated
// node shows the machine's cores, not the slots a rankfile binds to, so a
// rankfile itself fails there; the placement is what the runs need. Every
// rank from 0 to the largest must appear once, on one of the cluster's
// compute nodes.
func (p Plan) SeqHostfile(rankfile string) (string, error) {
	nodes := map[string]bool{}
	for _, n := range p.Of(Compute) {
		nodes[n.Name] = true
	}
	hosts := map[int]string{}
	sc := bufio.NewScanner(strings.NewReader(rankfile))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		rest, ok := strings.CutPrefix(text, "rank")
		num, hostAndSlot, found := strings.Cut(rest, "=")
		r, err := strconv.Atoi(strings.TrimSpace(num))
		host, _, _ := strings.Cut(strings.TrimSpace(hostAndSlot), " ")
		if !ok || !found || err != nil || r < 0 || host == "" {
			return "", fmt.Errorf("vcluster: rankfile line %d: %q: want rank N=HOST slot=S", line, text)
		}
		if !nodes[host] {
			return "", fmt.Errorf("vcluster: rankfile line %d: host %q is not a compute node of the cluster", line, host)
		}
		if _, dup := hosts[r]; dup {
			return "", fmt.Errorf("vcluster: rankfile line %d: rank %d placed twice", line, r)
		}
		hosts[r] = host
	}
	if len(hosts) == 0 {
		return "", fmt.Errorf("vcluster: rankfile places no rank")
	}
	var b strings.Builder
	for r := range len(hosts) {
		h, ok := hosts[r]
		if !ok {
			return "", fmt.Errorf("vcluster: rankfile places no rank %d (ranks 0 to %d must all be placed)", r, len(hosts)-1)
		}
		b.WriteString(h + "\n")
	}
	return b.String(), nil
}
