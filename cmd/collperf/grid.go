//go:build cgo

package main

import (
	"encoding/binary"
	"fmt"
)

// block is one rank's part of the global array: start and size per dimension.
type block struct {
	start, size [3]int
}

// decompose splits a global array of dims g over the grid p and returns
// the block of rank r (row-major rank order). Remainders go to the first
// ranks of each dimension, so sizes differ by at most one.
func decompose(g, p [3]int, r int) (block, error) {
	if r < 0 || r >= p[0]*p[1]*p[2] {
		return block{}, fmt.Errorf("rank %d outside grid %v", r, p)
	}
	coord := [3]int{r / (p[1] * p[2]), r / p[2] % p[1], r % p[2]}
	var b block
	for d := 0; d < 3; d++ {
		base, rem := g[d]/p[d], g[d]%p[d]
		c := coord[d]
		b.size[d] = base
		if c < rem {
			b.size[d]++
		}
		b.start[d] = c*base + min(c, rem)
	}
	return b, nil
}

// elements is the number of array elements in the block.
func (b block) elements() int { return b.size[0] * b.size[1] * b.size[2] }

// each calls f with the position in the block (row-major) and the global
// linear index of every element, in order.
func (b block) each(g [3]int, f func(i int, v int32)) {
	i := 0
	for x := 0; x < b.size[0]; x++ {
		for y := 0; y < b.size[1]; y++ {
			base := ((b.start[0]+x)*g[1]+b.start[1]+y)*g[2] + b.start[2]
			for z := 0; z < b.size[2]; z++ {
				f(i, int32(base+z))
				i++
			}
		}
	}
}

// fill writes the global linear index of each element of the block into
// buf (the value coll_perf checks).
func (b block) fill(g [3]int, buf []int32) {
	b.each(g, func(i int, v int32) { buf[i] = v })
}

// verify counts elements of buf that differ from what fill writes, and
// returns the first bad index (-1 if none).
func (b block) verify(g [3]int, buf []int32) (bad int, first int) {
	first = -1
	b.each(g, func(i int, v int32) {
		if buf[i] != v {
			if first < 0 {
				first = i
			}
			bad++
		}
	})
	return bad, first
}

// fillBytes is fill into a byte buffer of little-endian int32s (the file's
// byte order on the machines collperf targets, "native" data
// representation).
func (b block) fillBytes(g [3]int, buf []byte) {
	b.each(g, func(i int, v int32) { binary.LittleEndian.PutUint32(buf[4*i:], uint32(v)) })
}

// verifyBytes is verify on a buffer written by fillBytes; it allocates
// nothing, so it does not disturb the memory measurements.
func (b block) verifyBytes(g [3]int, buf []byte) (bad int, first int) {
	first = -1
	b.each(g, func(i int, v int32) {
		if binary.LittleEndian.Uint32(buf[4*i:]) != uint32(v) {
			if first < 0 {
				first = i
			}
			bad++
		}
	})
	return bad, first
}
