package vcluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeqHostfileFromRankfile(t *testing.T) {
	p, err := NewPlan(Spec{Compute: 2, Storage: 1, Bricks: 1, Rate: "1gbit", StorageRate: "1gbit"})
	require.NoError(t, err)
	got, err := p.SeqHostfile("rank 2=node0 slot=1\n# comment\nrank 0=node0 slot=0\nrank 1=node1 slot=0\n\n")
	require.NoError(t, err)
	require.Equal(t, "node0\nnode1\nnode0\n", got)
	for rf, want := range map[string]string{
		"":                                    "places no rank",
		"rank 0=node7 slot=0\n":               `host "node7" is not a compute node`,
		"rank 0=node0 slot=0\nrank 2=node1\n": "places no rank 1",
		"rank 0=node0 slot=0\nrank 0=node1\n": "rank 0 placed twice",
		"node0 slots=2\n":                     "line 1",
		"rank x=node0 slot=0\n":               "line 1",
	} {
		_, err := p.SeqHostfile(rf)
		require.ErrorContains(t, err, want, "rankfile %q", rf)
	}
}
