// Package simmodel is the time model of collio sim: a LogGP-style network
// applied to the traffic each rank sent and received in each phase of a
// collective call, and the sim driver's storage model (driver/sim)
// applied to the aggregators' file writes. It is pure arithmetic: the
// traffic comes from running the real strategies on the in-memory
// communicator (comm.Counting), the writes from their file calls.
package simmodel

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Link is one class of connection between two ranks, in LogGP terms.
type Link struct {
	Latency     time.Duration // L: a message's time in flight
	Overhead    time.Duration // o: a rank's busy time to send or to receive one message
	BytesPerSec float64       // 1/G: a rank's rate of putting bytes on the link or taking them off
}

// Network is the machine: links within a node (shared memory) and
// between nodes, and each node's network interface, which all ranks of
// the node share for the bytes that leave or enter it.
type Network struct {
	Intra, Inter   Link
	NICBytesPerSec float64 // each way, per node
}

// DefaultNetwork is an assumption, not a measurement: a cluster of
// InfiniBand HDR class (2 us latency, 1 us software overhead per message,
// 12.5 GB/s per node each way, a single rank reaching 10 GB/s) whose
// ranks on a node talk through shared memory (0.5 us, 0.3 us, 20 GB/s per
// rank: one memory copy, which never touches the interface). Override it
// to match a machine.
func DefaultNetwork() Network {
	return Network{
		Intra:          Link{Latency: 500 * time.Nanosecond, Overhead: 300 * time.Nanosecond, BytesPerSec: 20e9},
		Inter:          Link{Latency: 2 * time.Microsecond, Overhead: time.Microsecond, BytesPerSec: 10e9},
		NICBytesPerSec: 12.5e9,
	}
}

// Check reports parameters the model cannot use.
func (n Network) Check() error {
	for _, l := range []struct {
		name string
		l    Link
	}{{"intra-node", n.Intra}, {"inter-node", n.Inter}} {
		if l.l.Latency < 0 || l.l.Overhead < 0 {
			return fmt.Errorf("simmodel: %s latency and overhead must not be negative", l.name)
		}
		if !(l.l.BytesPerSec > 0) || math.IsInf(l.l.BytesPerSec, 0) {
			return fmt.Errorf("simmodel: %s bandwidth %g bytes/s; need a positive number", l.name, l.l.BytesPerSec)
		}
	}
	if !(n.NICBytesPerSec > 0) || math.IsInf(n.NICBytesPerSec, 0) {
		return fmt.Errorf("simmodel: NIC bandwidth %g bytes/s; need a positive number", n.NICBytesPerSec)
	}
	return nil
}

// Flow is a number of messages and their bytes.
type Flow struct{ Msgs, Bytes int64 }

// Traffic is what one rank did in one phase. Point-to-point messages
// (and the pairwise messages of an Alltoall(v)) are split by whether the
// peer is on the rank's node. Other collectives (Allgather, Allreduce,
// Bcast, Barrier, communicator splits) are counted as calls, with the
// bytes the rank received from others in them.
type Traffic struct {
	SentIntra, SentInter, RecvIntra, RecvInter Flow
	Collectives, CollBytes                     int64
}

// PhaseTime is the modelled time of one phase and what bounds it.
type PhaseTime struct {
	Time time.Duration
	// Rank is the slowest rank and RankTime its time; Node is the node
	// whose interface is busiest and NICTime its time. Time is the larger.
	Rank, Node        int
	RankTime, NICTime time.Duration
}

// Phase models one phase in which ranks[r] is rank r's traffic and
// nodeOf[r] its node. Every rank starts the phase together; a rank is
// busy sending for o per message plus bytes at its link rate, and
// likewise receiving; its messages overlap in flight, so one latency is
// added for the last message. A collective costs ceil(log2 ranks) rounds
// of one inter-node latency and two overheads (a tree or recursive
// doubling), plus its received bytes at the inter-node rate. A node's
// interface carries the inter-node bytes of all its ranks in each
// direction at NICBytesPerSec. The phase ends when the slowest rank and
// the busiest interface are done.
func (n Network) Phase(ranks []Traffic, nodeOf []int) (PhaseTime, error) {
	if err := n.Check(); err != nil {
		return PhaseTime{}, err
	}
	if len(nodeOf) != len(ranks) {
		return PhaseTime{}, fmt.Errorf("simmodel: %d ranks of traffic but %d node assignments", len(ranks), len(nodeOf))
	}
	nodes := 0
	for r, k := range nodeOf {
		if k < 0 {
			return PhaseTime{}, fmt.Errorf("simmodel: rank %d on node %d", r, k)
		}
		nodes = max(nodes, k+1)
	}
	out, in := make([]int64, nodes), make([]int64, nodes)
	steps := float64(bits.Len(uint(max(len(ranks)-1, 0)))) // ceil(log2 ranks)
	var pt PhaseTime
	var worst float64
	for r, t := range ranks {
		send := n.Intra.busy(t.SentIntra) + n.Inter.busy(t.SentInter)
		recv := n.Intra.busy(t.RecvIntra) + n.Inter.busy(t.RecvInter)
		s := max(send, recv)
		switch {
		case t.SentInter.Msgs > 0 || t.RecvInter.Msgs > 0:
			s += n.Inter.Latency.Seconds()
		case t.SentIntra.Msgs > 0 || t.RecvIntra.Msgs > 0:
			s += n.Intra.Latency.Seconds()
		}
		s += float64(t.Collectives)*steps*(n.Inter.Latency.Seconds()+2*n.Inter.Overhead.Seconds()) +
			float64(t.CollBytes)/n.Inter.BytesPerSec
		if s > worst {
			worst, pt.Rank = s, r
		}
		out[nodeOf[r]] += t.SentInter.Bytes
		in[nodeOf[r]] += t.RecvInter.Bytes
	}
	var nic float64
	for k := range out {
		if b := max(out[k], in[k]); b > 0 {
			if s := float64(b)/n.NICBytesPerSec + n.Inter.Latency.Seconds(); s > nic {
				nic, pt.Node = s, k
			}
		}
	}
	pt.RankTime, pt.NICTime = seconds(worst), seconds(nic)
	pt.Time = max(pt.RankTime, pt.NICTime)
	return pt, nil
}

// busy is a rank's time spent on f's messages at one end of the link.
func (l Link) busy(f Flow) float64 {
	return float64(f.Msgs)*l.Overhead.Seconds() + float64(f.Bytes)/l.BytesPerSec
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
