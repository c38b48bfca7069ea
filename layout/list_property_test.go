package layout

import (
	"math/rand/v2"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// flatRun is one run of a plainly flattened view: file offset and length.
type flatRun struct{ off, n int64 }

// flatten is the reference for an hindexed view of one element type: every
// block expanded, empty ones dropped, adjacent ones merged.
func flatten(lens []int, displs []int64, elem *Type) []flatRun {
	var out []flatRun
	for i, l := range lens {
		for k := 0; k < l; k++ {
			for off, n := range elem.Blocks() {
				off += displs[i] + int64(k)*elem.Extent()
				if j := len(out) - 1; j >= 0 && out[j].off+out[j].n == off {
					out[j].n += n
					continue
				}
				out = append(out, flatRun{off, n})
			}
		}
	}
	return out
}

// The compact form of an hindexed view (a list node of merged blocks, or
// the repeats of the general path) walks, seeks and counts exactly as the
// plain flattened list of its runs, for views of up to 10^6 pieces, empty
// ones (no block, or blocks of length 0) included.
func TestListFormMatchesFlatList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := 0
		if e := rapid.IntRange(0, 6).Draw(t, "log10 max pieces"); e > 0 {
			n = rapid.IntRange(0, pow10(e)).Draw(t, "pieces")
		}
		seed := rapid.Uint64().Draw(t, "seed")
		elem := rapid.SampledFrom([]*Type{Byte, Bytes(4), Float64}).Draw(t, "elem")
		maxLen := rapid.IntRange(1, 64).Draw(t, "max block")
		maxGap := rapid.IntRange(0, 64).Draw(t, "max gap")
		rng := rand.New(rand.NewPCG(seed, 7))
		lens := make([]int, n)
		displs := make([]int64, n)
		off := int64(rng.IntN(100))
		for i := range lens {
			lens[i] = rng.IntN(maxLen + 1) // 0 at times: an empty block
			displs[i] = off + int64(rng.IntN(maxGap+1))
			off = displs[i] + int64(lens[i])*elem.Extent()
		}
		got, err := HIndexed(lens, displs, elem)
		if err != nil {
			t.Fatal(err)
		}
		want := flatten(lens, displs, elem)
		var size int64
		for _, r := range want {
			size += r.n
		}
		if got.Size() != size {
			t.Fatalf("size %d, want %d", got.Size(), size)
		}

		// The blocks, and a stream's pieces, are the flat runs.
		k := 0
		for o, l := range got.Blocks() {
			if k >= len(want) || (flatRun{o, l}) != want[k] {
				t.Fatalf("block %d is (%d, %d), want %v", k, o, l, at(want, k))
			}
			k++
		}
		if k != len(want) {
			t.Fatalf("%d blocks, want %d", k, len(want))
		}
		s := NewStream(got, 0, 1)
		for k = 0; ; k++ {
			o, l, ok := s.Next(0)
			if !ok {
				break
			}
			if k >= len(want) || (flatRun{o, l}) != want[k] {
				t.Fatalf("piece %d is (%d, %d), want %v", k, o, l, at(want, k))
			}
		}
		if k != len(want) {
			t.Fatalf("stream gave %d pieces, want %d", k, len(want))
		}
		if len(want) == 0 {
			return
		}

		// Data before a file offset, and seeking to it, by brute force
		// over the flat runs (prefix sums, then the run the offset is in).
		prefix := make([]int64, len(want)+1)
		for i, r := range want {
			prefix[i+1] = prefix[i] + r.n
		}
		before := func(x int64) int64 {
			i := sort.Search(len(want), func(i int) bool { return want[i].off+want[i].n > x })
			if i == len(want) {
				return size
			}
			return prefix[i] + min(max(x-want[i].off, 0), want[i].n)
		}
		end := want[len(want)-1].off + want[len(want)-1].n
		for range 50 {
			x := want[0].off - 3 + rng.Int64N(end-want[0].off+6)
			d, err := s.DataBefore(x)
			if err != nil {
				t.Fatal(err)
			}
			if d != before(x) {
				t.Fatalf("DataBefore(%d) = %d, want %d", x, d, before(x))
			}
			p := rng.Int64N(size)
			if err := s.SeekData(p); err != nil {
				t.Fatal(err)
			}
			o, l, ok := s.Next(0)
			i := sort.Search(len(want), func(i int) bool { return prefix[i+1] > p })
			wo, wl := want[i].off+p-prefix[i], prefix[i+1]-p
			if !ok || o != wo || l != wl {
				t.Fatalf("after SeekData(%d): (%d, %d, %v), want (%d, %d)", p, o, l, ok, wo, wl)
			}
		}
	})
}

func pow10(e int) int {
	n := 1
	for range e {
		n *= 10
	}
	return n
}

func at(runs []flatRun, k int) any {
	if k < len(runs) {
		return runs[k]
	}
	return "none"
}
