package topo

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
)

func TestVirtual(t *testing.T) {
	for _, tc := range []struct {
		size, nodeSize int
		of             []int
	}{
		{10, 4, []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}},
		{8, 4, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{5, 1, []int{0, 1, 2, 3, 4}},
		{5, 0, []int{0, 0, 0, 0, 0}},
		{5, -3, []int{0, 0, 0, 0, 0}},
		{3, 7, []int{0, 0, 0}},
		{1, 1, []int{0}},
		{7, 3, []int{0, 0, 0, 1, 1, 1, 2}},
	} {
		n := Virtual(tc.size, tc.nodeSize)
		require.Equal(t, tc.of, n.Of, "Virtual(%d,%d)", tc.size, tc.nodeSize)
		require.Equal(t, tc.of[len(tc.of)-1]+1, n.Count())
		for k, name := range n.Names {
			require.Equal(t, vnodeName(k), name)
		}
		require.NoError(t, n.Validate())
	}
	n := Virtual(0, 4)
	require.Empty(t, n.Of)
	require.Zero(t, n.Count())
	require.NoError(t, n.Validate())
}

func TestRanks(t *testing.T) {
	n := Virtual(10, 4)
	require.Equal(t, []int{0, 1, 2, 3}, n.Ranks(0))
	require.Equal(t, []int{8, 9}, n.Ranks(2))
	require.Nil(t, n.Ranks(3))
	require.Nil(t, n.Ranks(-1))
	rr := Nodes{Of: []int{0, 1, 0, 1, 0}, Names: []string{"a", "b"}}
	require.Equal(t, []int{0, 2, 4}, rr.Ranks(0))
	require.Equal(t, []int{1, 3}, rr.Ranks(1))
}

func TestValidate(t *testing.T) {
	require.NoError(t, Nodes{Of: []int{0, 1, 0, 1}, Names: []string{"a", "b"}}.Validate())
	require.Error(t, Nodes{Of: []int{1, 0}, Names: []string{"a", "b"}}.Validate())
	require.Error(t, Nodes{Of: []int{0, 2}, Names: []string{"a", "b", "c"}}.Validate())
	require.Error(t, Nodes{Of: []int{0, 0}, Names: []string{"a", "b"}}.Validate())
	require.Error(t, Nodes{Of: []int{0, -1}, Names: []string{"a"}}.Validate())
}

// discoverAll runs Discover on every rank of an in-memory world, after wrap
// (nil: none), and returns each rank's result.
func discoverAll(t *testing.T, size, worldNodeSize, nodeSize int, wrap func(comm.Comm) comm.Comm) ([]Nodes, error) {
	t.Helper()
	out := make([]Nodes, size)
	err := comm.RunWorldTimeout(size, worldNodeSize, 10*time.Second, func(c comm.Comm) error {
		if wrap != nil {
			c = wrap(c)
		}
		n, err := Discover(c, nodeSize)
		out[c.Rank()] = n
		return err
	})
	return out, err
}

func requireSame(t *testing.T, all []Nodes, want Nodes) {
	t.Helper()
	for r, n := range all {
		require.Equal(t, want, n, "rank %d", r)
		require.NoError(t, n.Validate())
	}
}

func TestDiscoverInMemory(t *testing.T) {
	for _, tc := range []struct{ size, worldNodeSize int }{{1, 1}, {4, 2}, {10, 4}, {6, 0}, {5, 1}} {
		all, err := discoverAll(t, tc.size, tc.worldNodeSize, 0, nil)
		require.NoError(t, err)
		requireSame(t, all, Virtual(tc.size, tc.worldNodeSize))
	}
}

func TestDiscoverThroughCounting(t *testing.T) {
	all, err := discoverAll(t, 6, 2, 0, func(c comm.Comm) comm.Comm { return comm.Counting(c, comm.NewCounters()) })
	require.NoError(t, err)
	requireSame(t, all, Virtual(6, 2))
}

func TestDiscoverNodeSizeOverride(t *testing.T) {
	all, err := discoverAll(t, 8, 4, 2, nil)
	require.NoError(t, err)
	requireSame(t, all, Virtual(8, 2))
	// The override also applies to communicators without virtual nodes.
	all, err = discoverAll(t, 5, 0, 3, func(c comm.Comm) comm.Comm { return opaqueComm{c} })
	require.NoError(t, err)
	requireSame(t, all, Virtual(5, 3))
}

// A sub-communicator whose rank 0 is on world node 1: nodes are renumbered
// by lowest rank but keep the world's names.
func TestDiscoverSubComm(t *testing.T) {
	const size = 8
	out := make([]Nodes, size)
	err := comm.RunWorldTimeout(size, 4, 10*time.Second, func(c comm.Comm) error {
		// Ranks 2..7, reversed: new ranks 0..3 are world 7..4 (node 1).
		color := 0
		if c.Rank() < 2 {
			color = -1
		}
		sub, err := c.Split(color, -c.Rank())
		if err != nil || sub == nil {
			return err
		}
		defer func() { _ = sub.Free() }()
		n, err := Discover(sub, 0)
		out[c.Rank()] = n
		return err
	})
	require.NoError(t, err)
	want := Nodes{Of: []int{0, 0, 0, 0, 1, 1}, Names: []string{"vnode1", "vnode0"}}
	requireSame(t, out[2:], want)
}

// namedComm hides the in-memory nodes and reports processor names.
type namedComm struct {
	comm.Comm
	name func(rank int) (string, error)
}

func (c namedComm) ProcessorName() (string, error) { return c.name(c.Rank()) }

// opaqueComm hides the in-memory nodes and has no processor names: only
// SplitNode tells the nodes.
type opaqueComm struct{ comm.Comm }

func TestDiscoverByProcessorName(t *testing.T) {
	hosts := []string{"beta", "alpha", "beta", "alpha", "gamma"}
	wrap := func(c comm.Comm) comm.Comm {
		return namedComm{c, func(r int) (string, error) { return hosts[r], nil }}
	}
	all, err := discoverAll(t, 5, 0, 0, wrap)
	require.NoError(t, err)
	requireSame(t, all, Nodes{Of: []int{0, 1, 0, 1, 2}, Names: []string{"beta", "alpha", "gamma"}})

	// Found behind a wrapper too.
	all, err = discoverAll(t, 5, 0, 0, func(c comm.Comm) comm.Comm {
		return comm.Counting(wrap(c), comm.NewCounters())
	})
	require.NoError(t, err)
	requireSame(t, all, Nodes{Of: []int{0, 1, 0, 1, 2}, Names: []string{"beta", "alpha", "gamma"}})
}

func TestDiscoverProcessorNameErrorOnAllRanks(t *testing.T) {
	boom := errors.New("boom")
	for _, failing := range []error{boom, nil} { // nil: an empty name
		out := make([]error, 4)
		// Each rank keeps Discover's error and returns nil, so the run's
		// own error can only be a hang.
		err := comm.RunWorldTimeout(4, 0, 10*time.Second, func(c comm.Comm) error {
			nc := namedComm{c, func(r int) (string, error) {
				if r == 2 {
					return "", failing
				}
				return "host", nil
			}}
			_, err := Discover(nc, 0)
			out[c.Rank()] = err
			return nil
		})
		require.NoError(t, err, "a rank hung")
		for r, err := range out {
			require.Error(t, err, "rank %d", r)
			require.Contains(t, err.Error(), "rank 2")
		}
		if failing != nil {
			require.ErrorIs(t, out[2], boom)
		}
	}
}

func TestDiscoverBySplitNode(t *testing.T) {
	wrap := func(c comm.Comm) comm.Comm { return opaqueComm{c} }
	// Several nodes in one process share a host name, which does not fit
	// the grouping: generic names.
	all, err := discoverAll(t, 7, 3, 0, wrap)
	require.NoError(t, err)
	want := Virtual(7, 3)
	want.Names = []string{"node0", "node1", "node2"}
	requireSame(t, all, want)

	// One node: it is named after the host.
	host, herr := os.Hostname()
	if herr != nil || host == "" {
		t.Skip("no host name")
	}
	all, err = discoverAll(t, 3, 0, 0, wrap)
	require.NoError(t, err)
	requireSame(t, all, Nodes{Of: []int{0, 0, 0}, Names: []string{host}})
}

func TestHostsFit(t *testing.T) {
	n := Nodes{Of: []int{0, 1, 0, 1}, Names: []string{"x", "y"}}
	require.True(t, hostsFit(n, []string{"a", "b", "a", "b"}))
	require.False(t, hostsFit(n, []string{"a", "a", "a", "a"}))
	require.False(t, hostsFit(n, []string{"a", "b", "c", "b"}))
}

func TestDiscoverNilComm(t *testing.T) {
	_, err := Discover(nil, 0)
	require.Error(t, err)
}
