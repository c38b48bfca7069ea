package cdatatypes

// MPI_Pack as ground truth for decoding.

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// // collio_pack_one packs one instance of dt whose true lower bound is at
// // buf[0]; the origin MPI sees is therefore buf - tlb.
// static int collio_pack_one(char *buf, MPI_Aint tlb, MPI_Datatype dt, char *out, int outsize, int *pos) {
//   *pos = 0;
//   return MPI_Pack(buf - tlb, 1, dt, out, outsize, pos, MPI_COMM_SELF);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/collio/collio/internal/mpi"
)

// packPasses bytes of offset are recovered, one byte per pass, which
// limits the true extent to 16 MiB.
const packPasses = 3

// PackOffsets returns, for each byte MPI_Pack produces from one instance
// of dt, the offset (relative to the instance's origin, so lb-adjusted and
// possibly negative) of the source byte MPI took it from. It fills a
// true-extent buffer whose bytes encode their own position, packs it once
// per byte of position, and decodes the packed bytes.
func PackOffsets(dt mpi.Datatype) ([]int64, error) {
	size, err := dt.Size()
	if err != nil {
		return nil, err
	}
	tlb, text, err := dt.TrueExtent()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return []int64{}, nil
	}
	if text <= 0 || text > 1<<(8*packPasses) {
		return nil, fmt.Errorf("PackOffsets: true extent %d not in (0, %d]", text, 1<<(8*packPasses))
	}
	var packSize C.int
	handle := C.MPI_Datatype(dt.Pointer())
	if err := mpi.CodeError(int(C.MPI_Pack_size(1, handle, C.MPI_COMM_SELF, &packSize)), "MPI_Pack_size"); err != nil {
		return nil, err
	}
	src := make([]byte, text)
	out := make([]byte, max(int(packSize), 1))
	offs := make([]int64, size)
	for pass := range packPasses {
		shift := 8 * pass
		for i := range src {
			src[i] = byte(i >> shift)
		}
		var pos C.int
		rc := C.collio_pack_one((*C.char)(unsafe.Pointer(&src[0])), C.MPI_Aint(tlb), handle,
			(*C.char)(unsafe.Pointer(&out[0])), C.int(len(out)), &pos)
		if err := mpi.CodeError(int(rc), "MPI_Pack"); err != nil {
			return nil, err
		}
		if int64(pos) != size {
			return nil, fmt.Errorf("PackOffsets: MPI_Pack produced %d bytes, type size is %d", int(pos), size)
		}
		for i := range offs {
			offs[i] |= int64(out[i]) << shift
		}
	}
	for i := range offs {
		offs[i] += tlb
	}
	return offs, nil
}
