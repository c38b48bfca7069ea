package twophase

import (
	"testing"

	"github.com/collio/collio/internal/coll"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestInterleaved(t *testing.T) {
	require.False(t, coll.Interleaved([]coll.Range{{Start: 0, End: 10}, {Start: 10, End: 20}, {}, {Start: 20, End: 30}}))
	require.True(t, coll.Interleaved([]coll.Range{{Start: 0, End: 10}, {Start: 5, End: 20}}))
	// Disjoint ranges out of rank order (IOR -C) do not interleave, unlike
	// ROMIO's rank-order test; overlaps found only after sorting do.
	require.False(t, coll.Interleaved([]coll.Range{{Start: 10, End: 20}, {Start: 0, End: 5}}))
	require.False(t, coll.Interleaved([]coll.Range{{Start: 30, End: 40}, {}, {Start: 0, End: 10}, {Start: 20, End: 30}, {Start: 10, End: 20}}))
	require.True(t, coll.Interleaved([]coll.Range{{Start: 30, End: 40}, {Start: 0, End: 10}, {Start: 5, End: 12}}))
	require.True(t, coll.Interleaved([]coll.Range{{Start: 20, End: 30}, {Start: 0, End: 100}, {Start: 40, End: 50}}), "a range inside an earlier, longer one")
	require.False(t, coll.Interleaved([]coll.Range{{}, {}}))
}

func TestFileDomainsStripeAligned(t *testing.T) {
	d := FileDomains(coll.Range{Start: 100, End: 1100}, 4, 0, 64)
	require.Equal(t, []coll.Range{{Start: 100, End: 320}, {Start: 320, End: 576}, {Start: 576, End: 832}, {Start: 832, End: 1100}}, d)
	d = FileDomains(coll.Range{Start: 0, End: 10}, 4, 0, 0)
	require.Equal(t, []coll.Range{{Start: 0, End: 3}, {Start: 3, End: 6}, {Start: 6, End: 9}, {Start: 9, End: 10}}, d)
	d = FileDomains(coll.Range{Start: 0, End: 10}, 4, 8, 0)
	require.Equal(t, []coll.Range{{Start: 0, End: 8}, {Start: 8, End: 10}, {Start: 10, End: 10}, {Start: 10, End: 10}}, d, "minimum domain size leaves trailing aggregators idle")
}

// Domains tile the span in order, whatever the parameters.
func TestFileDomainsTile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		start := rapid.Int64Range(0, 1000).Draw(t, "start")
		span := coll.Range{Start: start, End: start + rapid.Int64Range(1, 100000).Draw(t, "len")}
		n := rapid.IntRange(1, 64).Draw(t, "n")
		d := FileDomains(span, n, rapid.Int64Range(0, 5000).Draw(t, "min"), rapid.Int64Range(0, 4096).Draw(t, "stripe"))
		require.Len(t, d, n)
		at := span.Start
		for _, r := range d {
			require.Equal(t, at, r.Start)
			require.GreaterOrEqual(t, r.End, r.Start)
			at = r.End
		}
		require.Equal(t, span.End, at)
		buf := rapid.Int64Range(1, 10000).Draw(t, "buf")
		rounds := Rounds(d, buf)
		for _, r := range d {
			covered := int64(0)
			for m := 0; m < rounds; m++ {
				covered += Window(r, m, buf).Len()
			}
			require.Equal(t, r.Len(), covered)
		}
	})
}
