package twophase

import (
	"fmt"
	"testing"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/refmodel"
	"github.com/collio/collio/layout"
)

// BenchmarkPlanPieces measures planning per piece for 10^3 .. 10^7 pieces:
// a rank slicing its view into the pieces of every window (O(n)), and an
// aggregator merging the (offset, length) lists of 4 sources by offset
// (O(n log n)). Run: go test -run XXX -bench PlanPieces ./twophase/
func BenchmarkPlanPieces(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5, 1e6, 1e7} {
		b.Run(fmt.Sprintf("slice/n=%d", n), func(b *testing.B) {
			// n 8-byte pieces, one every 32 bytes (4 ranks interleaved).
			ft := refmodel.Must(layout.Resized(layout.Bytes(8), 0, 32))
			j := &coll.Job{Access: coll.Access{Count: int64(8 * n), Filetype: ft, Size: int64(8 * n)}, BufSize: 1 << 20}
			var buf []coll.Piece
			b.ResetTimer()
			for range b.N {
				sl := coll.NewSlicer(j.Access)
				total := 0
				for w := int64(0); w < int64(32*n); w += j.BufSize {
					var err error
					buf, _, _, _, err = sl.In([]coll.Range{{Start: w, End: w + j.BufSize}}, buf[:0])
					if err != nil {
						b.Fatal(err)
					}
					total += len(buf)
				}
				if total < n {
					b.Fatalf("%d pieces, want at least %d", total, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/piece")
		})
		b.Run(fmt.Sprintf("merge/n=%d", n), func(b *testing.B) {
			e := &engine{size: 4}
			st := &roundState{src: make([][]coll.Extent, 4), srcBytes: make([]int64, 4), starts: make([]int64, 4)}
			for s := 0; s < 4; s++ {
				for k := 0; k < n/4; k++ {
					st.src[s] = append(st.src[s], coll.Extent{Off: int64(32*k + 8*s), N: 8})
				}
			}
			b.ResetTimer()
			for range b.N {
				sorted := e.entries(st)
				if _, holes, _ := shape(sorted); holes {
					b.Fatal("unexpected holes")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/piece")
		})
	}
}
