package tam

import (
	"testing"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/refmodel"
)

// BenchmarkLocalMerge: a local aggregator's merge of its members' lists
// and the runs it coalesces them into, per piece: E3SM pieces of 8-64
// bytes, two at a time from one member, from 4 and 16 members.
func BenchmarkLocalMerge(b *testing.B) {
	for _, size := range []int{4, 16} {
		b.Run(map[int]string{4: "4members", 16: "16members"}[size], func(b *testing.B) {
			const pieces = 1 << 20
			lists := refmodel.E3SMLists(size, pieces, 1) // some touch, some leave a hole
			var merged []coll.Entry
			var runs []stretch
			b.ReportMetric(0, "ns/op")
			b.ResetTimer()
			for range b.N {
				merged = coll.Merge(lists, nil, merged[:0])
				runs = findRuns(merged, runs[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pieces, "ns/piece")
		})
	}
}
