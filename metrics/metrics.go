// Package metrics holds what collio measures about each collective call:
// where the time went (request exchange, data shuffle, file I/O, the reads
// of read-modify-write), the messages and bytes each rank sent and
// received, rounds and aggregators. Every strategy fills the same record,
// so benchmarks print one breakdown whatever the strategy.
package metrics

import (
	"fmt"
	"time"
)

// Call describes one collective call on one rank.
type Call struct {
	Op       string `json:"op"`       // write_at_all, read_all, ...
	Strategy string `json:"strategy"` // twophase, independent, ...
	Reason   string `json:"reason"`   // why the strategy was chosen
	// Domains is how two-phase split the file among aggregators: even,
	// aligned, stripe_cyclic, or affinity with how many blocks stayed with
	// the rank that has most of their data.
	Domains string `json:"domains,omitempty"`
	Bytes   int64  `json:"bytes"` // data bytes this rank moved

	Rounds      int  `json:"rounds"`      // two-phase rounds (cycles)
	Aggregators int  `json:"aggregators"` // ranks that did file I/O for the others
	Aggregator  bool `json:"aggregator"`  // whether this rank was one

	Plan        time.Duration `json:"plan_ns"`         // computing ranges, domains, pieces
	ReqExchange time.Duration `json:"req_exchange_ns"` // exchanging sizes and (offset, length) lists
	Shuffle     time.Duration `json:"shuffle_ns"`      // moving data between ranks and aggregators
	IO          time.Duration `json:"io_ns"`           // file writes or reads (excluding RMW reads), busy time
	RMW         time.Duration `json:"rmw_ns"`          // reads of read-modify-write, busy time
	// IOWait is the part of IO+RMW the rank waited for: with overlap,
	// file I/O runs behind the next round's exchange, and only what was not
	// hidden counts here; without overlap it equals IO+RMW.
	IOWait time.Duration `json:"io_wait_ns"`
	// CacheDrain is the time spent making the global file current over
	// the call's range first, when an E10 cache held data there.
	CacheDrain time.Duration `json:"cache_drain_ns"`
	// Agree is the agreement on the outcome that ends the call (one small
	// Allgather; E10's post_write): it also waits for the slowest rank.
	Agree time.Duration `json:"agree_ns"`
	// Publish is what a rank spent so that ranks read back their own
	// bytes where the aggregators wrote them through another node's client
	// (a file system whose node caches are not coherent): the sync and the
	// drop of cached pages before the write returns, or, with
	// collio_deferred_sync, the wait for earlier writes' syncs (then also
	// part of the file I/O that waited).
	Publish time.Duration `json:"publish_ns"`
	Total   time.Duration `json:"total_ns"` // the whole call

	MsgsSent  int64 `json:"msgs_sent"`
	MsgsRecv  int64 `json:"msgs_recv"`
	BytesSent int64 `json:"bytes_sent"`
	BytesRecv int64 `json:"bytes_recv"`
	// CrossNodeBytes is the data (not request lists) this rank sent to
	// ranks on other nodes, where the node layout is known (two or more
	// nodes, real or collio_node_size ones); two-phase counts it, and TAM
	// for writes (its second layer's data).
	CrossNodeBytes int64 `json:"cross_node_bytes"`
}

// Add accumulates o into c (for totals over many calls).
func (c *Call) Add(o Call) {
	c.Bytes += o.Bytes
	c.Rounds += o.Rounds
	c.Aggregators = max(c.Aggregators, o.Aggregators)
	c.Aggregator = c.Aggregator || o.Aggregator
	c.Plan += o.Plan
	c.ReqExchange += o.ReqExchange
	c.Shuffle += o.Shuffle
	c.IO += o.IO
	c.RMW += o.RMW
	c.IOWait += o.IOWait
	c.CacheDrain += o.CacheDrain
	c.Agree += o.Agree
	c.Publish += o.Publish
	c.Total += o.Total
	c.MsgsSent += o.MsgsSent
	c.MsgsRecv += o.MsgsRecv
	c.BytesSent += o.BytesSent
	c.BytesRecv += o.BytesRecv
	c.CrossNodeBytes += o.CrossNodeBytes
}

// Timer accumulates elapsed time into a duration.
func Timer(d *time.Duration) func() {
	start := time.Now()
	return func() { *d += time.Since(start) }
}

func (c Call) String() string {
	return fmt.Sprintf("%s via %s (%s): %d bytes, %d rounds, %d aggregators; plan %v, exchange %v, shuffle %v, io %v, rmw %v (not hidden %v), total %v; sent %d msgs/%d B, received %d msgs/%d B",
		c.Op, c.Strategy, c.Reason, c.Bytes, c.Rounds, c.Aggregators, c.Plan, c.ReqExchange, c.Shuffle, c.IO, c.RMW, c.IOWait, c.Total,
		c.MsgsSent, c.BytesSent, c.MsgsRecv, c.BytesRecv)
}
