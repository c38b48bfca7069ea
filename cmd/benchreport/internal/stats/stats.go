// Package stats holds the two statistics of every benchmark report: the
// median of repeated launches and the ratio of two medians. Every report
// (bench.md, cbench.md, pair, pieces, syscallcost) uses these, so that a
// figure means the same in each.
package stats

import "slices"

// Median is the median of xs, the mean of the middle two for an even
// count; ok is false when xs is empty. xs is not reordered.
func Median(xs []float64) (m float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// Ratio is a / b, the one ratio rule of the reports: a variant's figure
// over the reference's (the best host variant, or the other side of a
// pair). ok is false, and the ratio 0, when b is not positive: a missing
// or zero reference has no ratio.
func Ratio(a, b float64) (r float64, ok bool) {
	if !(b > 0) {
		return 0, false
	}
	return a / b, true
}
