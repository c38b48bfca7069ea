package tam

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/collio/collio/internal/coll"
)

func TestCoalesceTable(t *testing.T) {
	// Rank 0: [0,4) [10,12); rank 1: [4,6) [12,14) [20,22); rank 2: [5,8).
	lists := [][]coll.Extent{{{Off: 0, N: 4}, {Off: 10, N: 2}}, {{Off: 4, N: 2}, {Off: 12, N: 2}, {Off: 20, N: 2}}, {{Off: 5, N: 3}}}
	data := [][]byte{[]byte("aaaaAA"), []byte("bbBBcc"), []byte("CCC")}
	merged := coll.Merge(lists, nil, nil)
	runs := findRuns(merged, nil)
	require.Equal(t, []stretch{
		{off: 0, n: 8, first: 0, end: 3, overlap: true},
		{off: 10, n: 4, first: 3, end: 5},
		{off: 20, n: 2, first: 5, end: 6},
	}, runs)
	// [4,6) from rank 1 and [5,8) from rank 2 overlap at 5: rank 2 wins.
	require.Equal(t, "aaaabCCCAABBcc", string(coalesce(merged, runs, data, nil)))
}

// Against a byte map: merging keeps file order, runs cover exactly the
// union of the pieces with no two runs touching, and coalesced data is
// what rank-ordered independent writes give.
func TestCoalesceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(0, 6).Draw(t, "sources")
		lists := make([][]coll.Extent, k)
		data := make([][]byte, k)
		ref := map[int64]byte{}
		for s := 0; s < k; s++ {
			var off int64
			for p := rapid.IntRange(0, 6).Draw(t, "pieces"); p > 0; p-- {
				off += rapid.Int64Range(0, 5).Draw(t, "gap")
				n := rapid.Int64Range(1, 6).Draw(t, "n")
				lists[s] = append(lists[s], coll.Extent{Off: off, N: n})
				for b := off; b < off+n; b++ {
					v := byte(s*50 + int(b))
					data[s] = append(data[s], v)
					ref[b] = v // later sources overwrite
				}
				off += n
			}
		}
		merged := coll.Merge(lists, nil, nil)
		if !slices.IsSortedFunc(merged, func(a, b coll.Entry) int {
			if a.Off != b.Off {
				return int(a.Off - b.Off)
			}
			return a.Src - b.Src
		}) {
			t.Fatalf("merge not sorted: %v", merged)
		}
		runs := findRuns(merged, nil)
		got := coalesce(merged, runs, data, nil)
		var want []byte
		var total int64
		for q, rn := range runs {
			if q > 0 && runs[q-1].off+runs[q-1].n >= rn.off {
				t.Fatalf("runs %d and %d touch", q-1, q)
			}
			for b := rn.off; b < rn.off+rn.n; b++ {
				v, ok := ref[b]
				if !ok {
					t.Fatalf("run %v covers byte %d no piece has", rn, b)
				}
				want = append(want, v)
			}
			total += rn.n
		}
		if total != int64(len(ref)) {
			t.Fatalf("runs cover %d bytes, pieces %d", total, len(ref))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("coalesced %v, want %v", got, want)
		}
	})
}
