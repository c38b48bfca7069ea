// Package refmodel is the byte-level reference model of the tests of the
// collective strategies: where every data byte of an access goes, found by
// expanding the layouts block by block, independently of layout.Stream,
// which the strategies use, and so what a sequence of writes leaves in a
// file. The strategies' tests build their reference files from it, and
// draw their cases with its helpers.
package refmodel

import "github.com/collio/collio/layout"

// Access is one rank's access: the file side (the data bytes [DataStart,
// DataStart+Size) of Filetype tiled from Disp) and the memory side (Count
// instances of MemType; nil MemType means Size contiguous bytes).
type Access struct {
	Disp      int64
	Filetype  *layout.Type
	DataStart int64
	Size      int64
	MemType   *layout.Type
	Count     int64
}

// FileOffsets returns the file offset of each data byte of the access.
func FileOffsets(a Access) []int64 {
	var out []int64
	skip := a.DataStart
	for tile := int64(0); int64(len(out)) < a.Size; tile++ {
		for bo, bl := range a.Filetype.Blocks() {
			for k := int64(0); k < bl && int64(len(out)) < a.Size; k++ {
				if skip > 0 {
					skip--
					continue
				}
				out = append(out, a.Disp+tile*a.Filetype.Extent()+bo+k)
			}
		}
	}
	return out
}

// MemOffsets returns the buffer offset of each data byte of the access.
func MemOffsets(a Access) []int64 {
	if a.MemType == nil {
		out := make([]int64, a.Size)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	var out []int64
	for k := int64(0); k < a.Count; k++ {
		for bo, bl := range a.MemType.Blocks() {
			for i := int64(0); i < bl; i++ {
				out = append(out, k*a.MemType.Extent()+bo+i)
			}
		}
	}
	return out[:min(int64(len(out)), a.Size)]
}
