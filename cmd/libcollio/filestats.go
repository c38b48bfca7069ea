package main

// #include "shim.h"
// #include "collio.h"
import "C"

import (
	"time"
	"unsafe"

	"github.com/collio/collio/metrics"
)

// collioGoFileStats fills out with file h's figures: out[0] with this
// rank's (all == 0), or out[0..2] with the sum, minimum and maximum over
// the file's ranks (all == 1, collective).
//
//export collioGoFileStats
func collioGoFileStats(h C.uintptr_t, all C.int, out *C.collio_stats) C.int {
	f, err := lookup(h)
	if err != nil {
		return C.MPI_ERR_FILE
	}
	s := f.stats
	if all == 0 {
		s.counters.Open = time.Since(s.opened)
		*out = C.collio_stats{ranks: 1, open_ns: C.longlong(s.counters.Open)}
		kinds := cKinds(out)
		for k := range kinds {
			putCounters(kinds[k], &s.counters.Kinds[k])
		}
		putStrategy(out, s.last)
		return C.MPI_SUCCESS
	}
	ranks, err := f.gather()
	if err != nil {
		return C.MPI_ERR_OTHER
	}
	rep := metrics.Aggregate(f.path, absPath(f.path), ranks, nil)
	outs := unsafe.Slice(out, 3)
	opens := [3]int64{rep.Open.Sum, rep.Open.Min, rep.Open.Max}
	for i := range outs {
		outs[i] = C.collio_stats{ranks: C.int(rep.Ranks), open_ns: C.longlong(opens[i])}
		putStrategy(&outs[i], s.last)
	}
	for k, kind := range rep.Kinds() {
		for i, c := range [3]metrics.Counters{kind.Sum(), kind.Min(), kind.Max()} {
			putCounters(cKinds(&outs[i])[k], &c)
		}
	}
	return C.MPI_SUCCESS
}

// cKinds lists out's counters in the order of metrics' kind constants.
func cKinds(out *C.collio_stats) [metrics.NumKinds]*C.collio_call_stats {
	return [metrics.NumKinds]*C.collio_call_stats{&out.collective_write, &out.collective_read,
		&out.independent_write, &out.independent_read}
}

func putCounters(dst *C.collio_call_stats, c *metrics.Counters) {
	*dst = C.collio_call_stats{
		calls: C.longlong(c.Calls), failed: C.longlong(c.Failed), bytes: C.longlong(c.Bytes),
		pieces: C.longlong(c.Pieces), rounds: C.longlong(c.Rounds), aggregator_calls: C.longlong(c.AggregatorCalls),
		plan_ns: C.longlong(c.Plan), req_exchange_ns: C.longlong(c.ReqExchange), shuffle_ns: C.longlong(c.Shuffle),
		io_ns: C.longlong(c.IO), rmw_ns: C.longlong(c.RMW), io_wait_ns: C.longlong(c.IOWait),
		cache_drain_ns: C.longlong(c.CacheDrain), agree_ns: C.longlong(c.Agree), total_ns: C.longlong(c.Total),
		msgs_sent: C.longlong(c.MsgsSent), msgs_recv: C.longlong(c.MsgsRecv),
		bytes_sent: C.longlong(c.BytesSent), bytes_recv: C.longlong(c.BytesRecv),
	}
}

// putStrategy copies the call's strategy and reason, cut to fit.
func putStrategy(out *C.collio_stats, c metrics.Call) {
	putString(out.strategy[:], c.Strategy)
	putString(out.reason[:], c.Reason)
}

func putString(dst []C.char, s string) {
	n := min(len(s), len(dst)-1)
	for i := 0; i < n; i++ {
		dst[i] = C.char(s[i])
	}
	dst[n] = 0
}
