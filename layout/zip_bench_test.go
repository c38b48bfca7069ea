package layout

import "testing"

// flash's memory layout: 16 blocks of 16³ float64 cells with 4 guard
// cells each side, the 8³ interior of each written: 1024 runs of 64 bytes
// per variable, zipped against one contiguous file range.
func BenchmarkZipFlashMemory(b *testing.B) {
	inner, err := Subarray([]int{16, 16, 16}, []int{8, 8, 8}, []int{4, 4, 4}, OrderC, Float64)
	if err != nil {
		b.Fatal(err)
	}
	blk := int64(16 * 16 * 16 * 8)
	mem, err := Resized(inner, 0, blk)
	if err != nil {
		b.Fatal(err)
	}
	n := int64(16 * 8 * 8 * 8 * 8)
	b.SetBytes(n)
	for b.Loop() {
		pieces := 0
		err := Zip(NewStream(mem, 0, 16), NewStream(Bytes(n), 0, 1), n, func(_, _, _ int64) error {
			pieces++
			return nil
		})
		if err != nil || pieces != 1024 {
			b.Fatal(err, pieces)
		}
	}
}
