package place

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
	"github.com/collio/collio/twophase"
	"github.com/stretchr/testify/require"
)

// runTwoPhase writes acc with two-phase on in-memory ranks placed by m,
// with affinity domains, and returns the data bytes the ranks counted as
// crossing nodes and the domains the engine reported.
func runTwoPhase(t *testing.T, p *Problem, m Mapping, cb int64) (int64, string) {
	t.Helper()
	n := len(p.Access)
	nodes := m.Nodes()
	aggs := p.Aggregators(m)
	span, _ := coll.Span(p.ranges)
	var total int64
	for _, a := range p.Access {
		total += a.Size
	}
	block := twophase.AffinityBlockSize(span, len(aggs), cb, 0)
	stats := make([]metrics.Call, n)
	path := filepath.Join(t.TempDir(), "out")
	err := comm.RunWorldTimeout(n, 0, time.Minute, func(c comm.Comm) error {
		f, err := ufs.New().Open(path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Perm: 0o644})
		if err != nil {
			return err
		}
		r := c.Rank()
		a := p.Access[r]
		j := &coll.Job{Comm: c, File: f, Aggregators: aggs, Ranges: p.ranges, BufSize: cb, TotalBytes: total, Stats: &stats[r],
			Access: coll.Access{Buf: make([]byte, a.Size), Count: a.Size, Disp: a.Disp, Filetype: a.Filetype,
				DataStart: a.DataStart, Size: a.Size}}
		if err := twophase.Write(j, twophase.DomainRule{NodeOf: nodes.Of, AffinityBlock: block}); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	require.NoError(t, err)
	var cross int64
	for _, s := range stats {
		cross += s.CrossNodeBytes
	}
	return cross, stats[0].Domains
}

// Rows of 48 KiB, 5 per rank, ranks shuffled over them: a 64 KiB block
// mostly belongs to one rank and partly to a neighbour, so affinity
// domains apply, keep most bytes home and move the rest. The model gives
// exactly the bytes two-phase sends across nodes when it runs, under
// byslot, bynode and SetMatch.
func TestAffinityCrossingMatchesTheRun(t *testing.T) {
	g := Grid{Sizes: []int{40, 6144}, Procs: []int{8, 1}, Elem: 8, Order: rand.New(rand.NewPCG(5, 0)).Perm(8)}
	acc, err := g.Accesses()
	require.NoError(t, err)
	a := Arch{Nodes: 2, CoresPerNode: 4}
	p := problem(t, acc, a, 0)
	sm, err := p.SetMatch(DefaultMinFraction)
	require.NoError(t, err)
	const cb = 16 << 20
	crossed, belowEven := 0, 0
	for _, c := range []struct {
		name string
		m    Mapping
	}{{"byslot", BySlot(8, a)}, {"bynode", ByNode(8, a)}, {"setmatch", sm}} {
		want, total, affinity, err := p.AffinityCrossing(c.m, cb)
		require.NoError(t, err)
		require.True(t, affinity, c.name)
		require.Equal(t, g.Ranks()*5*6144*8, int(total))
		got, domains := runTwoPhase(t, p, c.m, cb)
		require.True(t, strings.HasPrefix(domains, "affinity"), "%s: the engine used %q", c.name, domains)
		require.Equal(t, want, got, c.name)
		even, _, err := p.Crossing(c.m)
		require.NoError(t, err)
		if want > 0 {
			crossed++
		}
		if want < even {
			belowEven++
		}
	}
	require.Positive(t, crossed, "nothing crossed: the check proves little")
	require.Positive(t, belowEven, "affinity never beat even domains here")
}

func TestAffinityCrossingBadInput(t *testing.T) {
	acc, err := rowsGrid(2, 2, nil).Accesses()
	require.NoError(t, err)
	p := problem(t, acc, Arch{Nodes: 2, CoresPerNode: 2}, 0)
	_, _, _, err = p.AffinityCrossing(Mapping{0, 0, 0}, 1<<20)
	require.ErrorContains(t, err, "mapping of 3 ranks for 4 ranks")
	_, _, _, err = p.AffinityCrossing(Mapping{0, 0, 1, 1}, 0)
	require.ErrorContains(t, err, "cb_buffer_size 0")
	// Too small for blocks: ROMIO's domains.
	c, _, affinity, err := p.AffinityCrossing(Mapping{0, 0, 1, 1}, 1<<20)
	require.NoError(t, err)
	require.False(t, affinity)
	even, _, err := p.Crossing(Mapping{0, 0, 1, 1})
	require.NoError(t, err)
	require.Equal(t, even, c)
}
