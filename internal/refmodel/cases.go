package refmodel

import (
	"math/rand/v2"
	"slices"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/layout"
	"pgregory.net/rapid"
)

// Of is the reference form of a strategy's access.
func Of(a coll.Access) Access {
	return Access{Disp: a.Disp, Filetype: a.Filetype, DataStart: a.DataStart, Size: a.Size, MemType: a.MemType, Count: a.Count}
}

// Case is one rank's access in a strategy test and its buffer's original
// contents.
type Case struct {
	Access coll.Access
	Data   []byte
}

// ExpectedFile is what independent writes of all cases, in rank order,
// produce (on overlaps the higher rank wins).
func ExpectedFile(cases []Case) []byte { return ExpectedOver(nil, cases) }

// ExpectedOver is the file that held old after every case's writes, in
// rank order: old's bytes where no case writes, zeros past its end.
func ExpectedOver(old []byte, cases []Case) []byte {
	out := slices.Clone(old)
	for _, rc := range cases {
		fo, mo := FileOffsets(Of(rc.Access)), MemOffsets(Of(rc.Access))
		for i := range fo {
			for int64(len(out)) <= fo[i] {
				out = append(out, 0)
			}
			out[fo[i]] = rc.Data[mo[i]]
		}
	}
	return out
}

// Ranges is every case's file range.
func Ranges(cases []Case) []coll.Range {
	out := make([]coll.Range, len(cases))
	for k, rc := range cases {
		if offs := FileOffsets(Of(rc.Access)); len(offs) > 0 {
			out[k] = coll.Range{Start: offs[0], End: offs[len(offs)-1] + 1}
		}
	}
	return out
}

// Fill returns n bytes of a pattern that differs from rank to rank
// (seed) and does not repeat within a few hundred bytes.
func Fill(n int64, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*13 + i/97 + 1)
	}
	return b
}

// Must returns v, panicking on err: for building test layouts.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Vary draws two variations of an access of Size contiguous bytes: it
// starts skip more bytes into the view (when skip > 0 and it has more
// than skip), and its memory is a vector of every other Int32 rather
// than contiguous. It returns the case for rank, its buffer filled.
func Vary(t *rapid.T, a coll.Access, skip int64, rank int) Case {
	strided := rapid.Bool().Draw(t, "noncontig_mem") && a.Size > 0
	if rapid.Bool().Draw(t, "skip") && skip > 0 && a.Size > skip {
		a.DataStart += skip
		a.Size -= skip
	}
	a.Count = a.Size
	memLen := a.Size
	if strided {
		a.MemType = Must(layout.Vector(int(a.Size/4), 1, 2, layout.Int32))
		a.Count = 1
		memLen = a.MemType.Extent()
	}
	data := Fill(memLen, rank)
	a.Buf = append([]byte(nil), data...)
	return Case{Access: a, Data: data}
}

// E3SMLists is benchmark input for merges: pieces (offset, length)
// requests of 8-64 bytes, two at a time from a random one of sources,
// in file order, each followed by a hole of up to maxHole bytes, as
// E3SM's flushes send an aggregator.
func E3SMLists(sources, pieces, maxHole int) [][]coll.Extent {
	rng := rand.New(rand.NewPCG(1, 2))
	lists := make([][]coll.Extent, sources)
	off := int64(0)
	for i := 0; i < pieces; i += 2 {
		s := rng.IntN(sources)
		for k := 0; k < 2; k++ {
			n := int64(8 + rng.IntN(57))
			lists[s] = append(lists[s], coll.Extent{Off: off, N: n})
			off += n
			if maxHole > 0 {
				off += int64(rng.IntN(maxHole + 1))
			}
		}
	}
	return lists
}
