// Package twophase plans and runs ROMIO-style extended two-phase
// collective I/O: the aggregate access range is split into file domains,
// one per aggregator; in rounds of at most cb_buffer_size per aggregator,
// ranks send the (offset, length) pieces that fall into each aggregator's
// window and then the data (writes), or receive it back (reads), and the
// aggregators do large contiguous file I/O.
//
// Planning (this file) is pure: it depends only on the ranks' access
// ranges and the hints. Execution (engine.go, write.go, read.go) runs
// over a comm.Comm.
package twophase

import "github.com/collio/collio/internal/coll"

// FileDomains splits span into n consecutive domains, one per aggregator,
// of about equal size but at least minSize bytes, with inner boundaries
// moved to the nearest multiple of stripe (when stripe > 0) so that no two
// aggregators write into the same stripe (lock boundaries). Trailing
// domains may be empty.
func FileDomains(span coll.Range, n int, minSize, stripe int64) []coll.Range {
	doms := make([]coll.Range, n)
	if n <= 0 || span.Empty() {
		return doms
	}
	size := (span.Len() + int64(n) - 1) / int64(n)
	size = max(size, minSize, 1)
	prev := span.Start
	for i := 0; i < n; i++ {
		end := span.Start + int64(i+1)*size
		if stripe > 0 && i < n-1 {
			end = nearestMultiple(end, stripe)
		}
		end = min(max(end, prev), span.End)
		if i == n-1 {
			end = span.End
		}
		doms[i] = coll.Range{Start: prev, End: end}
		prev = end
	}
	return doms
}

func nearestMultiple(x, m int64) int64 {
	lo := x / m * m
	if x-lo >= m-(x-lo) {
		return lo + m
	}
	return lo
}

// Rounds is the number of rounds needed when each aggregator moves at most
// bufSize bytes of its domain per round.
func Rounds(domains []coll.Range, bufSize int64) int {
	n := int64(0)
	for _, d := range domains {
		n = max(n, (d.Len()+bufSize-1)/bufSize)
	}
	return int(n)
}

// Window is the part of domain d an aggregator handles in round m.
func Window(d coll.Range, m int, bufSize int64) coll.Range {
	lo := d.Start + int64(m)*bufSize
	if lo >= d.End {
		return coll.Range{}
	}
	return coll.Range{Start: lo, End: min(d.End, lo+bufSize)}
}

// Domains is the aggregators' file domains and their windows per round,
// by ROMIO's rules: stripe-cyclic when the rule has a StripeCount and a
// Stripe (as ROMIO's Lustre driver: see ActiveAggregators, StripeWindow),
// else even domains with inner edges on stripe boundaries (FileDomains,
// Window). TAM's global layer plans with it too, so TAM and two-phase
// agree on which aggregator moves which byte in which round.
type Domains struct {
	Aggs    []int        // the aggregators taking part, in domain order
	Domains []coll.Range // each one's domain (stripe-cyclic: all of the span)
	Rounds  int
	Striped bool // stripe-cyclic

	span            coll.Range
	stripe, bufSize int64
}

// PlanDomains plans j's domains over span by rule.
func PlanDomains(j *coll.Job, rule DomainRule, span coll.Range) *Domains {
	d := &Domains{span: span, stripe: rule.Stripe, bufSize: j.BufSize}
	if rule.StripeCount > 0 && rule.Stripe > 0 {
		active := ActiveAggregators(len(j.Aggregators), rule.StripeCount, rule.CoRatio)
		d.Aggs, d.Striped = j.Aggregators[:active], true
		d.Domains = make([]coll.Range, active)
		for i := range d.Domains {
			d.Domains[i] = span // each aggregator's stripes are spread over all of it
		}
		d.Rounds = StripeRounds(span, rule.Stripe, active)
		return d
	}
	d.Aggs = j.Aggregators
	d.Domains = FileDomains(span, len(d.Aggs), rule.MinDomain, rule.Stripe)
	d.Rounds = Rounds(d.Domains, j.BufSize)
	return d
}

// Window is the range aggregator i handles in round m, empty when it has
// none.
func (d *Domains) Window(i, m int) coll.Range {
	if d.Striped {
		w, _ := StripeWindow(d.span, d.stripe, len(d.Aggs), i, m)
		return w
	}
	return Window(d.Domains[i], m, d.bufSize)
}
