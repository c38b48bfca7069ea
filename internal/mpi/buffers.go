package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// bufPtr is the address of b's first byte, or nil for an empty slice
// (&b[0] would panic; MPI accepts any pointer with a zero count).
func bufPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// cCount converts a byte count to a C int, refusing what MPI's int counts
// cannot hold instead of truncating it.
func cCount(n int, what, call string) (C.int, error) {
	if n < 0 {
		return 0, fmt.Errorf("mpi: %s: %s is negative (%d)", call, what, n)
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("mpi: %s: %s is %d bytes, more than MPI's int count limit (%d)", call, what, n, math.MaxInt32)
	}
	return C.int(n), nil
}

// cCounts converts per-rank counts and displacements (in bytes) to C ints,
// checking that there is one of each per rank and that every block lies
// inside a buffer of bufLen bytes.
func cCounts(counts, displs []int, size, bufLen int, side, call string) (cc, cd []C.int, err error) {
	if len(counts) != size || len(displs) != size {
		return nil, nil, fmt.Errorf("mpi: %s: %d %scounts and %d %sdispls for %d ranks", call, len(counts), side, len(displs), side, size)
	}
	cc = make([]C.int, size)
	cd = make([]C.int, size)
	for r := range size {
		if cc[r], err = cCount(counts[r], fmt.Sprintf("%scounts[%d]", side, r), call); err != nil {
			return nil, nil, err
		}
		if cd[r], err = cCount(displs[r], fmt.Sprintf("%sdispls[%d]", side, r), call); err != nil {
			return nil, nil, err
		}
		if counts[r] > 0 && displs[r]+counts[r] > bufLen {
			return nil, nil, fmt.Errorf("mpi: %s: block %d (%d bytes at %d) ends past the %d-byte %s buffer", call, r, counts[r], displs[r], bufLen, bufName(side))
		}
	}
	return cc, cd, nil
}

func bufName(side string) string {
	switch side {
	case "s":
		return "send"
	case "r":
		return "receive"
	}
	return "receive"
}

// intPtr is the address of the first element, or nil for an empty slice.
func intPtr(v []C.int) *C.int {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// checkRank reports whether r names a rank of a size-rank communicator.
func checkRank(r, size int, what, call string) error {
	if r < 0 || r >= size {
		return fmt.Errorf("mpi: %s: %s %d is not a rank of this %d-rank communicator", call, what, r, size)
	}
	return nil
}

// gatherCount checks that recv holds len(send) bytes from every rank of c,
// as an allgather needs, and returns that count for MPI.
func (c Comm) gatherCount(send, recv []byte, call string) (C.int, error) {
	size, err := c.SizeErr()
	if err != nil {
		return 0, err
	}
	if len(recv) != size*len(send) {
		return 0, fmt.Errorf("mpi: %s: receive buffer is %d bytes, want %d ranks × %d bytes", call, len(recv), size, len(send))
	}
	return cCount(len(send), "send length", call)
}
