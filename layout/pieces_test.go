package layout

import "testing"

// pieces counts the contiguous file runs of n data bytes from data byte
// start of a view with filetype ft, by walking the blocks.
func walkPieces(ft *Type, start, n int64) int64 {
	var runs, pos, end int64 = 0, 0, -1
	for tile := int64(0); n > 0; tile++ {
		for off, l := range ft.Blocks() {
			off += tile * ft.Extent()
			if pos+l <= start {
				pos += l
				continue
			}
			skip := max(start-pos, 0)
			take := min(l-skip, n)
			if off+skip != end {
				runs++
			}
			end = off + skip + take
			n -= take
			pos += l
			start = pos
			if n == 0 {
				break
			}
		}
	}
	return runs
}

func TestPiecesOf(t *testing.T) {
	ints := must(Contiguous(4, Byte))
	block := must(Contiguous(4, ints)) // 16 bytes
	strided := must(Resized(block, 0, 64))
	vec := must(Vector(8, 2, 5, ints)) // 8 blocks of 8 bytes, stride 20: ends at a block
	joined := must(Resized(must(Vector(3, 1, 2, ints)), 0, 20))
	cases := []struct {
		name     string
		ft       *Type
		start, n int64
		want     int64 // 0: the walk's count
	}{
		{"contiguous", ints, 4, 1 << 20, 1},
		{"nothing", strided, 0, 0, 0},
		{"whole tiles", strided, 0, 160, 0},
		{"partial tiles", strided, 8, 100, 0},
		{"inside one block", strided, 3, 5, 0},
		{"vector whole", vec, 0, 64 * 3, 0},
		{"vector partial", vec, 16, 40, 0},
		{"joined tiles", joined, 0, 12 * 4, 0},
		{"joined partial", joined, 4, 12*3 + 4, 0},
	}
	for _, c := range cases {
		want := c.want
		if want == 0 && c.n > 0 {
			want = walkPieces(c.ft, c.start, c.n)
		}
		if got := PiecesOf(c.ft, c.start, c.n); got != want {
			t.Errorf("%s: PiecesOf(%v, %d, %d) = %d, want %d", c.name, c.ft, c.start, c.n, got, want)
		}
	}
	// A million tiles of a million-block filetype: no walk.
	big := must(Vector(1<<20, 1, 2, ints))
	// (Its tiles join: the last block ends at the extent.)
	if got := PiecesOf(big, 0, big.Size()<<20); got != 1<<40-(1<<20-1) {
		t.Fatalf("big: %d", got)
	}
}
