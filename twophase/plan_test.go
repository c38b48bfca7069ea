package twophase

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestInterleaved(t *testing.T) {
	require.False(t, Interleaved([]Range{{0, 10}, {10, 20}, {}, {20, 30}}))
	require.True(t, Interleaved([]Range{{0, 10}, {5, 20}}))
	require.True(t, Interleaved([]Range{{10, 20}, {0, 5}}), "rank order matters, as in ROMIO")
	require.False(t, Interleaved([]Range{{}, {}}))
}

func TestFileDomainsStripeAligned(t *testing.T) {
	d := FileDomains(Range{100, 1100}, 4, 0, 64)
	require.Equal(t, []Range{{100, 320}, {320, 576}, {576, 832}, {832, 1100}}, d)
	d = FileDomains(Range{0, 10}, 4, 0, 0)
	require.Equal(t, []Range{{0, 3}, {3, 6}, {6, 9}, {9, 10}}, d)
	d = FileDomains(Range{0, 10}, 4, 8, 0)
	require.Equal(t, []Range{{0, 8}, {8, 10}, {10, 10}, {10, 10}}, d, "minimum domain size leaves trailing aggregators idle")
}

// Domains tile the span in order, whatever the parameters.
func TestFileDomainsTile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		start := rapid.Int64Range(0, 1000).Draw(t, "start")
		span := Range{start, start + rapid.Int64Range(1, 100000).Draw(t, "len")}
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
