package twophase

import "github.com/collio/collio/internal/coll"

// Stripe-cyclic file domains, after ROMIO's Lustre driver
// (ad_lustre_aggregate.c, ad_lustre_wrcoll.c): aggregator a of `active`
// owns every stripe whose index is a modulo active, so each aggregator
// always talks to the same storage targets and no two aggregators ever
// write into the same stripe (no extent-lock ping-pong). These functions
// are pure; the engine decides when to use them.

// ActiveAggregators is ROMIO's Lustre rule (P. Deveze's) for how many of
// the cbNodes aggregators take part when the file has stripeCount stripes:
// if cbNodes >= stripeCount, stripeCount * min(cbNodes/stripeCount,
// coRatio), so each target is served by at most coRatio aggregators and
// all targets by the same number; otherwise the largest divisor of
// stripeCount that is <= cbNodes, so each aggregator serves the same
// number of targets. coRatio is romio_lustre_co_ratio for writes (values
// below 1 count as 1) and 1 for reads.
//
// With an unknown layout (stripeCount <= 0) all cbNodes aggregators are
// active; with cbNodes <= 0 none.
func ActiveAggregators(cbNodes, stripeCount, coRatio int) int {
	switch {
	case cbNodes <= 0:
		return 0
	case stripeCount <= 0:
		return cbNodes
	case cbNodes >= stripeCount:
		return stripeCount * min(cbNodes/stripeCount, max(coRatio, 1))
	}
	for d := cbNodes; d > 1; d-- {
		if stripeCount%d == 0 {
			return d
		}
	}
	return 1
}

// StripeOwner is the stripe-cyclic file-domain rule: the index (0 <= i <
// active) of the aggregator that handles the byte at off (off >= 0), that
// is (off / stripeSize) mod active. It returns 0 when stripeSize or active
// is not positive.
func StripeOwner(off, stripeSize int64, active int) int {
	if stripeSize <= 0 || active <= 0 {
		return 0
	}
	return int((off / stripeSize) % int64(active))
}

// Rounds. The stripes are taken in groups of `active` consecutive stripes
// (group g holds stripes g*active ... g*active+active-1, one per
// aggregator), and round m handles the m-th group that intersects span:
// aggregator a writes (or reads) the one stripe of that group it owns, cut
// to span. So every aggregator handles at most one stripe per round and
// needs a buffer of one stripe, as ROMIO's Lustre driver does (it ignores
// cb_buffer_size there). Grouping several of an aggregator's stripes per
// round, up to cb_buffer_size, would cut the number of rounds; it is not
// done here, so that a round's windows are a function of (span, stripe,
// active) alone.

// StripeWindow returns the file range aggregator a (0 <= a < active)
// handles in round m (0 <= m < StripeRounds): its stripe in the m-th
// stripe group that meets span, restricted to span, and whether that range
// is non-empty (the first and last rounds may leave some aggregators
// without data, and invalid arguments give false).
func StripeWindow(span coll.Range, stripeSize int64, active, a, m int) (coll.Range, bool) {
	if span.Empty() || stripeSize <= 0 || active <= 0 || a < 0 || a >= active || m < 0 {
		return coll.Range{}, false
	}
	n := int64(active)
	first := span.Start / stripeSize / n // group of span's first byte
	stripe := (first+int64(m))*n + int64(a)
	w := coll.Range{Start: max(stripe*stripeSize, span.Start), End: min((stripe+1)*stripeSize, span.End)}
	if w.Empty() {
		return coll.Range{}, false
	}
	return w, true
}

// StripeRounds is the number of rounds needed to cover span: the number
// of stripe groups (of active stripes each) that meet it. Every aggregator
// takes part in every round, with an empty window where StripeWindow says
// false. It is 0 for an empty span or invalid arguments.
func StripeRounds(span coll.Range, stripeSize int64, active int) int {
	if span.Empty() || stripeSize <= 0 || active <= 0 {
		return 0
	}
	n := int64(active)
	first := span.Start / stripeSize / n
	last := (span.End - 1) / stripeSize / n
	return int(last - first + 1)
}
