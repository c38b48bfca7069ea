package vcluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewPlanLaysOutNodes(t *testing.T) {
	p, err := NewPlan(Spec{Compute: 3, Storage: 2, Bricks: 1, Rate: "1gbit", StorageRate: "2gbit"})
	require.NoError(t, err)
	var names, addrs []string
	for _, n := range p.Nodes {
		names = append(names, n.Name)
		addrs = append(addrs, n.Addr.String())
		require.True(t, Subnet.Contains(n.Addr), "%s's address %s outside %s", n.Name, n.Addr, Subnet)
		require.True(t, strings.HasPrefix(n.NetNS, "vc-"))
	}
	require.Equal(t, []string{"login", "node0", "node1", "node2", "stor0", "stor1"}, names)
	require.Equal(t, []string{"169.254.100.5", "169.254.100.10", "169.254.100.11", "169.254.100.12", "169.254.100.200", "169.254.100.201"}, addrs)
	require.Equal(t, "login", p.Head().Name)
	require.Equal(t, "node0 slots=4\nnode1 slots=4\nnode2 slots=4\n", p.Hostfile(4))
	require.Equal(t, []string{"169.254.100.200:/mnt/vcluster/local/bricks/b0", "169.254.100.201:/mnt/vcluster/local/bricks/b0"}, p.Bricks())
	require.Contains(t, p.Hosts(), "169.254.100.11\tnode1\n")
	n, _ := p.Node("node1")
	require.Equal(t, "1gbit", n.Rate)
	require.Contains(t, n.Enter("/x"), "--mount="+nsDir+"/node1.mnt")
	require.NotContains(t, strings.Join(p.Head().Enter(""), " "), "--mount", "the login node keeps the machine's mounts")
}

func TestNewPlanRefusesBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Compute: 0, Storage: 1, Bricks: 1, Rate: "1gbit", StorageRate: "1gbit"}, "0 compute nodes"},
		{Spec{Compute: 17, Storage: 1, Bricks: 1, Rate: "1gbit", StorageRate: "1gbit"}, "17 compute nodes"},
		{Spec{Compute: 2, Storage: 0, Bricks: 1, Rate: "1gbit", StorageRate: "1gbit"}, "0 storage nodes"},
		{Spec{Compute: 2, Storage: 1, Bricks: 9, Rate: "1gbit", StorageRate: "1gbit"}, "9 bricks"},
		{Spec{Compute: 2, Storage: 1, Bricks: 1, Rate: "fast", StorageRate: "1gbit"}, `link rate "fast"`},
		{Spec{Compute: 2, Storage: 1, Bricks: 1, Rate: "1gbit", StorageRate: "1; rm -rf /"}, `link rate "1; rm -rf /"`},
	} {
		_, err := NewPlan(tc.spec)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestParseRateAndBurst(t *testing.T) {
	for in, want := range map[string]int64{"400mbit": 400e6, "2gbit": 2e9, "1.5Gbit": 1.5e9, "10mbps": 80e6, "64kbit": 64e3} {
		got, err := ParseRate(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	require.Equal(t, int64(500_000), Burst(400e6))
	require.Equal(t, int64(64<<10), Burst(1e6))
}

func TestParseMountPoints(t *testing.T) {
	info := "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw\n" +
		"40 35 0:40 / /mnt/with\\040space rw - tmpfs tmpfs rw\n"
	require.Equal(t, []string{"/mnt/parent", "/mnt/with space"}, parseMountPoints(info))
}
