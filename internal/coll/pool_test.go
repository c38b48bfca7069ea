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
	require.Equal(t, 2*mapMin, cap(big), "mapped sizes are rounded up")
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
