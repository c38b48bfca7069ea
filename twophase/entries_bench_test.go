package twophase

import (
	"testing"

	"github.com/collio/collio/internal/refmodel"
)

// The aggregator's merge of its sources' request lists, per piece: E3SM
// pieces of 8-64 bytes, two at a time from one rank, from 4 and 16 ranks.
func BenchmarkEntries(b *testing.B) {
	for _, size := range []int{4, 16} {
		b.Run(map[int]string{4: "4ranks", 16: "16ranks"}[size], func(b *testing.B) {
			const pieces = 1 << 20
			st := &roundState{src: refmodel.E3SMLists(size, pieces, 0), srcBytes: make([]int64, size), starts: make([]int64, size)}
			e := &engine{size: size}
			b.ReportMetric(0, "ns/op")
			b.ResetTimer()
			for range b.N {
				e.entries(st)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pieces, "ns/piece")
		})
	}
}
