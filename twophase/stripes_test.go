package twophase

import (
	"testing"

	"github.com/collio/collio/internal/coll"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestActiveAggregatorsTable(t *testing.T) {
	cases := []struct{ cbNodes, stripes, co, want int }{
		// cb_nodes >= stripe count: a multiple of the stripe count, <= co per target.
		{8, 4, 1, 4},
		{8, 4, 2, 8},
		{8, 4, 4, 8},
		{9, 4, 2, 8},
		{9, 4, 3, 8}, // 9/4 = 2 per target at most
		{12, 4, 3, 12},
		{4, 4, 1, 4},
		{100, 1, 1, 1},
		{100, 1, 64, 64},
		{5, 2, 0, 2}, // co < 1 counts as 1
		// cb_nodes < stripe count: the largest divisor of the stripe count.
		{3, 4, 1, 2},
		{5, 12, 1, 4},
		{7, 12, 1, 6},
		{11, 12, 1, 6},
		{4, 7, 1, 1}, // prime stripe count
		{1, 16, 1, 1},
		{6, 64, 1, 4},
		// degenerate
		{0, 4, 1, 0},
		{-1, 4, 1, 0},
		{6, 0, 1, 6}, // unknown layout
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ActiveAggregators(c.cbNodes, c.stripes, c.co), "%+v", c)
	}
}

func TestActiveAggregatorsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 500).Draw(t, "cbNodes")
		c := rapid.IntRange(1, 300).Draw(t, "stripeCount")
		co := rapid.IntRange(1, 8).Draw(t, "coRatio")
		got := ActiveAggregators(n, c, co)
		if got < 1 || got > n {
			t.Fatalf("active %d outside [1, %d]", got, n)
		}
		if n >= c {
			if got%c != 0 || got/c > co {
				t.Fatalf("active %d is not a multiple of %d with at most %d per stripe", got, c, co)
			}
			return
		}
		if c%got != 0 {
			t.Fatalf("active %d does not divide stripe count %d", got, c)
		}
		for d := got + 1; d <= n; d++ {
			if c%d == 0 {
				t.Fatalf("divisor %d <= %d is larger than %d", d, n, got)
			}
		}
	})
}

func TestStripeOwner(t *testing.T) {
	const s = 100
	cases := []struct {
		off    int64
		active int
		want   int
	}{
		{0, 4, 0}, {99, 4, 0}, {100, 4, 1}, {399, 4, 3}, {400, 4, 0}, {1234, 4, 0}, {1234, 3, 0}, {1300, 3, 1},
		{5, 1, 0}, {5, 0, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, StripeOwner(c.off, s, c.active), "%+v", c)
	}
	assert.Equal(t, 0, StripeOwner(500, 0, 4), "no stripe size")
}

func TestStripeWindowsTable(t *testing.T) {
	// Stripes of 100 bytes, 3 aggregators, span [250, 1020): stripe groups
	// [0,300) [300,600) [600,900) [900,1200) → 4 rounds.
	span := coll.Range{Start: 250, End: 1020}
	require.Equal(t, 4, StripeRounds(span, 100, 3))
	type win struct {
		r  coll.Range
		ok bool
	}
	want := [][]win{ // [round][aggregator]
		{{coll.Range{}, false}, {coll.Range{}, false}, {coll.Range{Start: 250, End: 300}, true}},
		{{coll.Range{Start: 300, End: 400}, true}, {coll.Range{Start: 400, End: 500}, true}, {coll.Range{Start: 500, End: 600}, true}},
		{{coll.Range{Start: 600, End: 700}, true}, {coll.Range{Start: 700, End: 800}, true}, {coll.Range{Start: 800, End: 900}, true}},
		{{coll.Range{Start: 900, End: 1000}, true}, {coll.Range{Start: 1000, End: 1020}, true}, {coll.Range{}, false}},
	}
	for m, row := range want {
		for a, w := range row {
			r, ok := StripeWindow(span, 100, 3, a, m)
			assert.Equal(t, w.ok, ok, "round %d agg %d", m, a)
			assert.Equal(t, w.r, r, "round %d agg %d", m, a)
		}
	}
	_, ok := StripeWindow(span, 100, 3, 0, 4)
	assert.False(t, ok, "past the last round")

	// A span far into the file starts at its own group, not at stripe 0.
	far := coll.Range{Start: 1 << 40, End: 1<<40 + 50}
	assert.Equal(t, 1, StripeRounds(far, 1<<20, 8))
	r, ok := StripeWindow(far, 1<<20, 8, StripeOwner(far.Start, 1<<20, 8), 0)
	assert.True(t, ok)
	assert.Equal(t, far, r)

	// Degenerate arguments.
	assert.Equal(t, 0, StripeRounds(coll.Range{Start: 5, End: 5}, 100, 3))
	assert.Equal(t, 0, StripeRounds(span, 0, 3))
	assert.Equal(t, 0, StripeRounds(span, 100, 0))
	for _, args := range [][2]int{{-1, 0}, {3, 0}, {0, -1}} {
		_, ok := StripeWindow(span, 100, 3, args[0], args[1])
		assert.False(t, ok, "%v", args)
	}
	// One stripe, one aggregator: the whole span in one round.
	assert.Equal(t, 1, StripeRounds(coll.Range{Start: 10, End: 20}, 1000, 1))
	r, ok = StripeWindow(coll.Range{Start: 10, End: 20}, 1000, 1, 0, 0)
	assert.True(t, ok)
	assert.Equal(t, coll.Range{Start: 10, End: 20}, r)
}

// TestStripeWindowsTileSpan: the windows of all aggregators over all rounds
// cover the span exactly once and in file order, each lies in one stripe,
// its owner is the aggregator, and no window is empty in a middle round.
func TestStripeWindowsTileSpan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		stripe := rapid.Int64Range(1, 1<<20).Draw(t, "stripe")
		active := rapid.IntRange(1, 40).Draw(t, "active")
		start := rapid.Int64Range(0, 1<<40).Draw(t, "start")
		length := rapid.Int64Range(1, stripe*int64(active)*6).Draw(t, "length")
		span := coll.Range{Start: start, End: start + length}
		rounds := StripeRounds(span, stripe, active)
		if rounds < 1 {
			t.Fatalf("%d rounds for a non-empty span", rounds)
		}
		var wins []coll.Range // in (round, aggregator) order
		for m := 0; m < rounds; m++ {
			roundWins := 0
			for a := 0; a < active; a++ {
				w, ok := StripeWindow(span, stripe, active, a, m)
				if !ok {
					if w != (coll.Range{}) {
						t.Fatalf("round %d agg %d: false with %v", m, a, w)
					}
					if m > 0 && m < rounds-1 {
						t.Fatalf("round %d agg %d: empty window in a middle round", m, a)
					}
					continue
				}
				roundWins++
				if w.Start < span.Start || w.End > span.End || w.Empty() {
					t.Fatalf("window %v outside span %v", w, span)
				}
				if w.Start/stripe != (w.End-1)/stripe {
					t.Fatalf("window %v crosses a stripe boundary", w)
				}
				if o := StripeOwner(w.Start, stripe, active); o != a {
					t.Fatalf("window %v of agg %d is owned by %d", w, a, o)
				}
				if o := StripeOwner(w.End-1, stripe, active); o != a {
					t.Fatalf("window %v of agg %d ends in a stripe of %d", w, a, o)
				}
				wins = append(wins, w)
			}
			if roundWins == 0 {
				t.Fatalf("round %d has no window", m)
			}
		}
		// In (round, aggregator) order the windows follow each other in the
		// file without gap or overlap and end at the span's end.
		at := span.Start
		for _, w := range wins {
			if w.Start != at {
				t.Fatalf("gap or overlap at %d: next window %v", at, w)
			}
			at = w.End
		}
		if at != span.End {
			t.Fatalf("windows end at %d, span at %d", at, span.End)
		}
		if _, ok := StripeWindow(span, stripe, active, 0, rounds); ok {
			t.Fatalf("window past the last round")
		}
		// Owner consistency for arbitrary bytes: the byte lies in a window of its owner.
		off := rapid.Int64Range(span.Start, span.End-1).Draw(t, "off")
		o := StripeOwner(off, stripe, active)
		found := false
		for m := 0; m < rounds && !found; m++ {
			if w, ok := StripeWindow(span, stripe, active, o, m); ok && w.Start <= off && off < w.End {
				found = true
			}
		}
		if !found {
			t.Fatalf("byte %d (owner %d) is in none of its owner's windows", off, o)
		}
	})
}
