package coll

import (
	"math/rand/v2"
	"testing"

	"github.com/collio/collio/layout"
)

// BenchmarkSlicePieces: one rank of an E3SM flush, a view of 230000
// irregular byte blocks (8 to 200 bytes, holes between) and a contiguous
// buffer, cut into the pieces of 4 domains' windows per round.
func BenchmarkSlicePieces(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 230000
	lens := make([]int, n)
	displs := make([]int64, n)
	off, size := int64(0), int64(0)
	for i := range lens {
		lens[i] = 8 * (1 + r.IntN(25))
		off += int64(8 * (1 + r.IntN(60)))
		displs[i] = off
		off += int64(lens[i])
		size += int64(lens[i])
	}
	ft, err := layout.HIndexed(lens, displs, layout.Byte)
	if err != nil {
		b.Fatal(err)
	}
	a := Access{Filetype: ft, Count: size, Size: size}
	const window = 4 << 20 // a domain's window per round
	var buf []Piece
	b.ResetTimer()
	for b.Loop() {
		sl := NewSlicer(a)
		pieces := 0
		for w := int64(0); w < off; w += 4 * window {
			ws := []Range{{w, w + window}, {w + window, w + 2*window}, {w + 2*window, w + 3*window}, {w + 3*window, w + 4*window}}
			for _, x := range ws {
				buf, _, _, _, err = sl.In([]Range{x}, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				pieces += len(buf)
			}
		}
		if pieces < n {
			b.Fatalf("%d pieces, want %d", pieces, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/piece")
}
