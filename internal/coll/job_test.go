package coll

import (
	"testing"

	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// Every invalid job is an error naming the problem.
func TestJobCheck(t *testing.T) {
	ok := Job{Ranges: make([]Range, 4), Aggregators: []int{0, 2}, BufSize: 1}
	require.NoError(t, ok.Check(4))
	for _, tc := range []struct {
		j    Job
		want string
	}{
		{Job{Ranges: make([]Range, 3), Aggregators: []int{0}, BufSize: 1}, "3 ranges for 4 ranks"},
		{Job{Ranges: make([]Range, 4), BufSize: 1}, "0 aggregators for 4 ranks"},
		{Job{Ranges: make([]Range, 4), Aggregators: []int{0, 1, 2, 3, 0}, BufSize: 1}, "5 aggregators for 4 ranks"},
		{Job{Ranges: make([]Range, 4), Aggregators: []int{0, 4}, BufSize: 1}, "aggregator list [0 4] has rank 4 out of range or twice"},
		{Job{Ranges: make([]Range, 4), Aggregators: []int{1, 1}, BufSize: 1}, "aggregator list [1 1] has rank 1 out of range or twice"},
		{Job{Ranges: make([]Range, 4), Aggregators: []int{0}}, "buffer size 0 must be positive"},
	} {
		require.EqualError(t, tc.j.Check(4), tc.want)
	}
}

// The slicer cuts a strided view into the pieces of each window, with
// memory positions, and BytesBefore counts the access's bytes before an
// offset.
func TestSlicer(t *testing.T) {
	// 4 bytes every 10, from offset 2; the access is data bytes [3, 15).
	ft, err := layout.Resized(layout.Bytes(4), 0, 10)
	require.NoError(t, err)
	a := Access{Buf: make([]byte, 12), Count: 12, Disp: 2, Filetype: ft, DataStart: 3, Size: 12}
	s := NewSlicer(a)
	got, lo, hi, err := s.Cut(Range{Start: 0, End: 25}, nil)
	require.NoError(t, err)
	// Data bytes 3..7 sit at 5, 12..15 and 22..25 (cut at 25).
	require.Equal(t, []Piece{{Mem: 0, Off: 5, N: 1}, {Mem: 1, Off: 12, N: 4}, {Mem: 5, Off: 22, N: 3}}, got)
	require.Equal(t, int64(0), lo)
	require.Equal(t, int64(8), hi)
	got, lo, hi, n, err := s.In([]Range{{Start: 13, End: 14}, {Start: 32, End: 40}}, nil)
	require.NoError(t, err)
	require.Equal(t, []Piece{{Mem: 2, Off: 13, N: 1}, {Mem: 9, Off: 32, N: 3}}, got)
	require.Equal(t, []int64{2, 12, 4}, []int64{lo, hi, n})
	for _, tc := range []struct{ end, want int64 }{{0, 0}, {6, 1}, {14, 3}, {24, 7}, {34, 11}, {100, 12}} {
		b, err := a.BytesBefore(tc.end)
		require.NoError(t, err)
		require.Equal(t, tc.want, b, "before %d", tc.end)
	}
}

// Chunks end at multiples of the chunk (a stripe's when larger), never
// past the range.
func TestWindowChunks(t *testing.T) {
	require.Equal(t, int64(DefaultWindowChunk), (&Job{}).Chunk(0))
	require.Equal(t, int64(4<<20), (&Job{}).Chunk(4<<20))
	require.Equal(t, int64(64), (&Job{WindowChunk: 16}).Chunk(64))
	require.Equal(t, int64(16), (&Job{WindowChunk: 16}).Chunk(8))
	require.Equal(t, int64(32), ChunkEnd(20, 100, 16))
	require.Equal(t, int64(48), ChunkEnd(32, 100, 16))
	require.Equal(t, int64(40), ChunkEnd(32, 40, 16))
}

// Cutting a view of many blocks into a fresh slice sizes it once: growing
// it by appends copied 24 bytes per piece several times over, more than the
// walk itself costs (E3SM's 10^5-10^6 pieces per rank).
func TestCutSizesItsSliceOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	const n = 100000
	lens := make([]int, n)
	displs := make([]int64, n)
	for i := range lens {
		lens[i], displs[i] = 8+i%5, int64(32*i)
	}
	ft, err := layout.HIndexed(lens, displs, layout.Byte)
	require.NoError(t, err)
	a := Access{Filetype: ft, Count: ft.Size(), Size: ft.Size()}
	s := NewSlicer(a)
	var got []Piece
	allocs := testing.AllocsPerRun(5, func() {
		got, _, _, err = s.Cut(Range{Start: 0, End: 32 * n}, nil)
	})
	require.NoError(t, err)
	require.Len(t, got, n)
	require.LessOrEqual(t, allocs, 1.0)
}
