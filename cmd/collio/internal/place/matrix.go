package place

import (
	"fmt"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/twophase"
)

// Domains is how two-phase splits a collective write among aggregators
// under ROMIO's generic rule (collio_file_domains=aligned, or even with
// Stripe 0): MinDomain is romio_min_fdomain_size, Stripe striping_unit.
type Domains struct {
	MinDomain, Stripe int64
}

// Cell is one nonzero entry of a row of the application matrix.
type Cell struct {
	Agg   int // index of the aggregator (its file domain)
	Bytes int64
}

// Matrix is the application matrix of one collective write: Rows[r] lists
// the bytes rank r sends to each aggregator, in aggregator order, nonzero
// entries only. Domains[i] is aggregator i's file domain.
type Matrix struct {
	Domains []coll.Range
	Rows    [][]Cell
}

// Ranks is the number of ranks (rows).
func (m *Matrix) Ranks() int { return len(m.Rows) }

// Max is the largest entry.
func (m *Matrix) Max() int64 {
	var most int64
	for _, row := range m.Rows {
		for _, c := range row {
			most = max(most, c.Bytes)
		}
	}
	return most
}

// Total is the sum of all entries: the bytes of the write.
func (m *Matrix) Total() int64 {
	var t int64
	for _, row := range m.Rows {
		for _, c := range row {
			t += c.Bytes
		}
	}
	return t
}

// Ranges returns every access's file range.
func Ranges(acc []Access) ([]coll.Range, error) {
	rs := make([]coll.Range, len(acc))
	for r, a := range acc {
		var err error
		if rs[r], err = a.Range(); err != nil {
			return nil, fmt.Errorf("place: rank %d: %w", r, err)
		}
	}
	return rs, nil
}

// Build computes the application matrix of a collective write by the
// ranks' accesses acc with naggs aggregators: the span of all accesses is
// cut into file domains by twophase.FileDomains, and each rank's bytes in
// each domain are counted from its view (no per-element work).
func Build(acc []Access, naggs int, dom Domains) (*Matrix, error) {
	if naggs < 1 {
		return nil, fmt.Errorf("place: %d aggregators; need at least one", naggs)
	}
	ranges, err := Ranges(acc)
	if err != nil {
		return nil, err
	}
	return build(acc, ranges, naggs, dom)
}

// BuildOver is the matrix of the bytes every rank has in each of the
// given file ranges (Cell.Agg indexes them): over two-phase's windows
// of each round, it says who sends what to whom round by round.
func BuildOver(acc []Access, ranges []coll.Range) (*Matrix, error) {
	rs, err := Ranges(acc)
	if err != nil {
		return nil, err
	}
	return over(acc, rs, ranges)
}

func build(acc []Access, ranges []coll.Range, naggs int, dom Domains) (*Matrix, error) {
	span, ok := coll.Span(ranges)
	if !ok {
		return nil, fmt.Errorf("place: no rank accesses any byte")
	}
	return over(acc, ranges, twophase.FileDomains(span, naggs, dom.MinDomain, dom.Stripe))
}

// over fills the matrix of the accesses (whose ranges are given) over
// domains.
func over(acc []Access, ranges, domains []coll.Range) (*Matrix, error) {
	m := &Matrix{Domains: domains, Rows: make([][]Cell, len(acc))}
	for r, a := range acc {
		err := a.bytesIn(a.stream(), ranges[r], m.Domains, func(d int, n int64) {
			m.Rows[r] = append(m.Rows[r], Cell{Agg: d, Bytes: n})
		})
		if err != nil {
			return nil, fmt.Errorf("place: rank %d: %w", r, err)
		}
	}
	return m, nil
}
