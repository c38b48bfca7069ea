package coll

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOffHeapPool(t *testing.T) {
	var b Buffers
	b.OffHeap()
	p := &b.Round[0].Recv
	small := p.Get(100)
	require.Len(t, small, 100)
	require.Nil(t, p.mapped, "small buffers stay on the heap")

	big := p.Get(mapMin + 1)
	require.Len(t, big, mapMin+1)
	require.NotNil(t, p.mapped)
	require.Zero(t, cap(big)%mapMin, "mapped sizes are rounded up")
	big[len(big)-1] = 7 // writable
	again := p.Get(mapMin)
	require.Same(t, &big[0], &again[0], "a smaller request reuses the mapping")

	grown := append(p.AppendTo(), 1, 2, 3)
	p.Keep(grown) // the same storage: still mapped
	require.NotNil(t, p.mapped)
	p.Keep(make([]byte, 10, 3*mapMin)) // other storage: the mapping goes
	require.Nil(t, p.mapped)
	require.Equal(t, 3*mapMin, cap(p.B))

	p.Get(4 * mapMin)
	b.Release()
	require.Nil(t, p.mapped)
	require.Nil(t, p.B)
	require.Len(t, p.Get(5), 5, "usable after Release")

	var heap Pool // not off-heap: never mapped
	heap.Get(4 * mapMin)
	require.Nil(t, heap.mapped)
}

// A closed file's mappings serve the next file's pools, best fit within
// twice the size; a miss gives back a kept mapping too small for it.
func TestReleasedMappingsServeTheNextFile(t *testing.T) {
	drain := func() {
		mappings.Lock()
		for len(mappings.free) > 0 {
			b := mappings.take(0)
			mappings.Unlock()
			unmapBufferNow(b)
			mappings.Lock()
		}
		mappings.Unlock()
	}
	drain()
	defer drain()

	var first Buffers
	first.OffHeap()
	win := first.Round[0].Window.Get(4 * mapMin)
	recv := first.Round[0].Recv.Get(mapMin)
	first.Release()
	require.Len(t, mappings.free, 2)

	var next Buffers
	next.OffHeap()
	got := next.Round[1].Window.Get(3 * mapMin) // 4 MiB is within twice 3 MiB
	require.Same(t, &win[0], &got[0])
	got = next.Round[1].Recv.Get(mapMin / 2) // under mapMin: the heap
	require.Nil(t, next.Round[1].Recv.mapped)
	big := next.MetaSend.Get(8 * mapMin) // misses: the kept 1 MiB goes
	require.NotSame(t, &recv[0], &big[0])
	require.Empty(t, mappings.free)
	next.Release()

	var huge Buffers
	huge.OffHeap()
	huge.Round[0].Window.Get(keepMax)
	huge.Round[1].Window.Get(keepMax)
	huge.Release()
	require.LessOrEqual(t, mappings.bytes, int64(keepMax), "at most keepMax is kept")
}
