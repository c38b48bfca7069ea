package twophase

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/topo"
)

// On several nodes, without striping, writes weigh affinity domains and
// reads do not (each node's client reads ahead of a scattered block into
// blocks other nodes read), unless collio_file_domains=affinity asks; on
// one node neither does unless asked. A job that asks for ROMIO's domains
// (the measured choice's other candidate) gets them, unless the hint asks
// for affinity. Own blocks are allowed everywhere.
func TestAffinityDomainsForWritesAcrossNodes(t *testing.T) {
	job := &coll.Job{Aggregators: []int{0, 1, 2, 3}, BufSize: 16 << 20,
		Ranges: []coll.Range{{Start: 0, End: 8 << 20}, {Start: 0, End: 8 << 20}, {Start: 0, End: 8 << 20}, {Start: 0, End: 8 << 20}}}
	for _, c := range []struct {
		nodes                    topo.Nodes
		domains                  string
		write, noAffinity, plans bool
	}{
		{topo.Virtual(4, 1), hints.DomainsAuto, true, false, true},
		{topo.Virtual(4, 1), hints.DomainsAuto, true, true, false},
		{topo.Virtual(4, 1), hints.DomainsAuto, false, false, false},
		{topo.Virtual(4, 1), hints.DomainsAffinity, false, false, true},
		{topo.Virtual(4, 1), hints.DomainsAffinity, true, true, true},
		{topo.Virtual(4, 4), hints.DomainsAuto, true, false, false},
		{topo.Virtual(4, 4), hints.DomainsAffinity, false, false, true},
	} {
		job.NoAffinityDomains = c.noAffinity
		h, err := hints.Resolve(map[string]string{hints.CollioFileDomains: c.domains}, hints.Options{
			Getenv: func(string) string { return "" }, ReadFile: func(string) ([]byte, error) { return nil, nil }})
		require.NoError(t, err)
		r := New(coll.Setting{Hints: h, Nodes: c.nodes}).Rule(job, c.write)
		require.Equal(t, c.plans, r.AffinityBlock > 0, "%d nodes, %s, write %v, no affinity %v", c.nodes.Count(), c.domains, c.write, c.noAffinity)
		require.NotZero(t, r.OwnGrid, "own blocks allowed")
	}
}
