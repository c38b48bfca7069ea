package simmodel

import (
	"testing"
	"time"

	"github.com/collio/collio/driver/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const us = time.Microsecond

// testNet: inter-node 2 us, 1 us, 1 byte/ns; intra-node 1 us, 0.5 us,
// 1 byte/ns; NIC 1 byte/ns.
func testNet() Network {
	return Network{
		Intra:          Link{Latency: us, Overhead: us / 2, BytesPerSec: 1e9},
		Inter:          Link{Latency: 2 * us, Overhead: us, BytesPerSec: 1e9},
		NICBytesPerSec: 1e9,
	}
}

func phase(t *testing.T, n Network, ranks []Traffic, nodeOf []int) PhaseTime {
	t.Helper()
	pt, err := n.Phase(ranks, nodeOf)
	require.NoError(t, err)
	return pt
}

func TestOneMessageBetweenNodes(t *testing.T) {
	// Each end: o + 1000 B at 1 B/ns = 2 us, plus L = 4 us. The NIC
	// moves 1000 B in 1 us, plus L = 3 us.
	pt := phase(t, testNet(), []Traffic{
		{SentInter: Flow{1, 1000}},
		{RecvInter: Flow{1, 1000}},
	}, []int{0, 1})
	assert.Equal(t, PhaseTime{Time: 4 * us, Rank: 0, Node: 0, RankTime: 4 * us, NICTime: 3 * us}, pt)
}

func TestAggregatorReceivingFromManyIsBoundByOverheads(t *testing.T) {
	// Rank 0 receives 8 messages of 1000 B: 8 o + 8 us + L = 18 us.
	ranks := make([]Traffic, 9)
	ranks[0].RecvInter = Flow{8, 8000}
	for r := 1; r <= 8; r++ {
		ranks[r].SentInter = Flow{1, 1000}
	}
	pt := phase(t, testNet(), ranks, []int{0, 1, 1, 1, 1, 2, 2, 2, 2})
	assert.Equal(t, 18*us, pt.Time)
	assert.Equal(t, 0, pt.Rank)
	assert.Equal(t, 10*us, pt.NICTime) // node 0 takes in 8000 B
}

func TestSharedNICBoundsCrossingBytes(t *testing.T) {
	// Four ranks per node each send 1 MB across at 10 B/ns per rank:
	// 1 + 100 + 2 us each, but node 0's interface moves 4 MB at 1 B/ns.
	n := testNet()
	n.Inter.BytesPerSec = 1e10
	ranks := make([]Traffic, 8)
	for r := range 4 {
		ranks[r].SentInter = Flow{1, 1e6}
		ranks[r+4].RecvInter = Flow{1, 1e6}
	}
	pt := phase(t, n, ranks, []int{0, 0, 0, 0, 1, 1, 1, 1})
	assert.Equal(t, 103*us, pt.RankTime)
	assert.Equal(t, 4002*us, pt.NICTime)
	assert.Equal(t, 4002*us, pt.Time)
	assert.Equal(t, 0, pt.Node)

	// The same bytes within the nodes never touch the interfaces.
	for r := range 4 {
		ranks[r] = Traffic{SentIntra: Flow{1, 1e6}}
		ranks[r+4] = Traffic{RecvIntra: Flow{1, 1e6}}
	}
	pt = phase(t, n, ranks, []int{0, 0, 0, 0, 0, 0, 0, 0})
	assert.Equal(t, time.Duration(0), pt.NICTime)
	assert.Equal(t, 1001500*time.Nanosecond, pt.Time) // 0.5 us + 1 ms + 1 us
}

func TestCollectivesCostLogRounds(t *testing.T) {
	// 8 ranks: 3 rounds of L + 2 o = 4 us per collective; two of them
	// and 7000 B received at 1 B/ns: 24 + 7 us.
	ranks := make([]Traffic, 8)
	for r := range ranks {
		ranks[r] = Traffic{Collectives: 2, CollBytes: 7000}
	}
	pt := phase(t, testNet(), ranks, make([]int, 8))
	assert.Equal(t, 31*us, pt.Time)
	// One rank: no rounds.
	pt = phase(t, testNet(), []Traffic{{Collectives: 5}}, []int{0})
	assert.Equal(t, time.Duration(0), pt.Time)
}

func TestPhaseBadInput(t *testing.T) {
	_, err := testNet().Phase(make([]Traffic, 2), []int{0})
	assert.ErrorContains(t, err, "2 ranks of traffic but 1 node assignments")
	_, err = testNet().Phase(make([]Traffic, 1), []int{-1})
	assert.ErrorContains(t, err, "rank 0 on node -1")
	n := testNet()
	n.Inter.BytesPerSec = 0
	_, err = n.Phase(nil, nil)
	assert.ErrorContains(t, err, "inter-node bandwidth 0")
	n = testNet()
	n.Intra.Overhead = -1
	assert.ErrorContains(t, n.Check(), "intra-node latency and overhead")
	n = testNet()
	n.NICBytesPerSec = 0
	assert.ErrorContains(t, n.Check(), "NIC bandwidth")
	require.NoError(t, DefaultNetwork().Check())
}

// storageParams: 4 targets of 1 MiB stripes at 1 MiB per ms, 10 us
// latency, 1 ms lock revocations: a full stripe costs 1.01 ms.
func storageParams() sim.Params {
	return sim.Params{StripeSize: 1 << 20, StripeCount: 4, Bandwidth: 1 << 30 * 1000 / 1024,
		Latency: 10 * us, LockLatency: time.Millisecond}
}

func TestStorageAggregatorsRunInParallelOnTheirTargets(t *testing.T) {
	// Aggregator 0 writes stripes 0 then 4 (both on target 0), one after
	// the other; aggregator 1 writes stripe 1 on target 1 meanwhile.
	d, err := Storage(storageParams(), [][]Write{{{0, 1 << 20}, {4 << 20, 1 << 20}}, {{1 << 20, 1 << 20}}})
	require.NoError(t, err)
	assert.Equal(t, 2020*us, d)
}

func TestStorageTargetQueueAndLocks(t *testing.T) {
	// Both on target 0, different stripes: the second queues.
	d, err := Storage(storageParams(), [][]Write{{{0, 1 << 20}}, {{4 << 20, 1 << 20}}})
	require.NoError(t, err)
	assert.Equal(t, 2020*us, d)
	// Both halves of stripe 0: the second also revokes the first's lock
	// (0.51 ms, then 10 us + 1 ms + 0.5 ms).
	d, err = Storage(storageParams(), [][]Write{{{0, 1 << 19}}, {{1 << 19, 1 << 19}}})
	require.NoError(t, err)
	assert.Equal(t, 2020*us, d)
	// Nothing written: no time.
	d, err = Storage(storageParams(), [][]Write{nil, {}})
	require.NoError(t, err)
	assert.Zero(t, d)
}

func TestStorageBadInput(t *testing.T) {
	_, err := Storage(storageParams(), [][]Write{{{-1, 5}}})
	assert.ErrorContains(t, err, "aggregator 0's write 0 at -1")
	p := storageParams()
	p.StripeCount = 0
	_, err = Storage(p, nil)
	assert.ErrorContains(t, err, "stripe count 0")
}
