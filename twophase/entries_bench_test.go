package twophase

import (
	"math/rand/v2"
	"testing"

	"github.com/collio/collio/internal/coll"
)

// The aggregator's merge of its sources' request lists, per piece: E3SM
// pieces of 8-64 bytes, two at a time from one rank, from 4 and 16 ranks.
func BenchmarkEntries(b *testing.B) {
	for _, size := range []int{4, 16} {
		b.Run(map[int]string{4: "4ranks", 16: "16ranks"}[size], func(b *testing.B) {
			const pieces = 1 << 20
			rng := rand.New(rand.NewPCG(1, 2))
			st := &roundState{src: make([][]coll.Extent, size), srcBytes: make([]int64, size), starts: make([]int64, size)}
			off := int64(0)
			for i := 0; i < pieces; i += 2 {
				s := rng.IntN(size)
				for k := 0; k < 2; k++ {
					n := int64(8 + rng.IntN(57))
					st.src[s] = append(st.src[s], coll.Extent{Off: off, N: n})
					off += n
				}
			}
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
