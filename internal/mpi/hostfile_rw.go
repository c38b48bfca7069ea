package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// enum { collio_read_at, collio_write_at, collio_read_at_all, collio_write_at_all,
//        collio_write_shared, collio_write_ordered, collio_read_ordered };
// // collio_file_rw runs one explicit-offset access and reports the bytes
// // moved, so that the status never crosses into Go.
// static int collio_file_rw(MPI_File fh, int kind, MPI_Offset off, void *buf, int count,
//                           MPI_Datatype dt, MPI_Count *bytes) {
//   MPI_Status st;
//   int rc;
//   switch (kind) {
//   case collio_read_at:      rc = MPI_File_read_at(fh, off, buf, count, dt, &st); break;
//   case collio_write_at:     rc = MPI_File_write_at(fh, off, buf, count, dt, &st); break;
//   case collio_read_at_all:  rc = MPI_File_read_at_all(fh, off, buf, count, dt, &st); break;
//   case collio_write_shared: rc = MPI_File_write_shared(fh, buf, count, dt, &st); break;
//   case collio_write_ordered: rc = MPI_File_write_ordered(fh, buf, count, dt, &st); break;
//   case collio_read_ordered: rc = MPI_File_read_ordered(fh, buf, count, dt, &st); break;
//   default:                  rc = MPI_File_write_at_all(fh, off, buf, count, dt, &st); break;
//   }
//   if (rc != MPI_SUCCESS) return rc;
//   return MPI_Get_elements_x(&st, MPI_BYTE, bytes);
// }
import "C"

import (
	"math"

	"github.com/collio/collio/internal/ioerr"
)

// The four explicit-offset accesses. off is in etypes of the current view;
// buf holds count instances of dt (a memory datatype, possibly
// noncontiguous). The result is the number of bytes moved, from the status
// with MPI_Get_elements_x(MPI_BYTE) (MPI_Get_count in bytes, without its
// int limit).

// ReadAt is MPI_File_read_at.
func (f *HostFile) ReadAt(off int64, buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_read_at, "MPI_File_read_at", off, buf, count, dt)
}

// WriteAt is MPI_File_write_at.
func (f *HostFile) WriteAt(off int64, buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_write_at, "MPI_File_write_at", off, buf, count, dt)
}

// ReadAtAll is MPI_File_read_at_all (collective).
func (f *HostFile) ReadAtAll(off int64, buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_read_at_all, "MPI_File_read_at_all", off, buf, count, dt)
}

// WriteAtAll is MPI_File_write_at_all (collective).
func (f *HostFile) WriteAtAll(off int64, buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_write_at_all, "MPI_File_write_at_all", off, buf, count, dt)
}

// WriteShared is MPI_File_write_shared.
func (f *HostFile) WriteShared(buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_write_shared, "MPI_File_write_shared", 0, buf, count, dt)
}

// WriteOrdered is MPI_File_write_ordered (collective).
func (f *HostFile) WriteOrdered(buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_write_ordered, "MPI_File_write_ordered", 0, buf, count, dt)
}

// ReadOrdered is MPI_File_read_ordered (collective).
func (f *HostFile) ReadOrdered(buf []byte, count int, dt Datatype) (int, error) {
	return f.access(C.collio_read_ordered, "MPI_File_read_ordered", 0, buf, count, dt)
}

func (f *HostFile) access(kind C.int, op string, off int64, buf []byte, count int, dt Datatype) (int, error) {
	if err := f.usable(op); err != nil {
		return 0, err
	}
	if count < 0 || count > math.MaxInt32 {
		return 0, ioerr.New(ioerr.ErrArg, op, "count %d out of range [0, %d]", count, math.MaxInt32)
	}
	if off < 0 {
		return 0, ioerr.New(ioerr.ErrArg, op, "negative offset %d", off)
	}
	if err := checkBufferCovers(op, buf, count, dt); err != nil {
		return 0, err
	}
	// buf holds no Go pointers, and the call is blocking: passing it is
	// allowed by the cgo rules without pinning.
	var moved C.MPI_Count
	rc := C.collio_file_rw(f.fh, kind, C.MPI_Offset(off), bufPtr(buf), C.int(count), dt.t, &moved)
	if err := fileError(rc, op, f.path); err != nil {
		return 0, err
	}
	return int(moved), nil
}

// checkBufferCovers verifies that count instances of dt, starting at
// buf[0], touch only bytes inside buf: MPI would read or write past it
// otherwise.
func checkBufferCovers(op string, buf []byte, count int, dt Datatype) error {
	if dt.unusable() {
		return ioerr.New(ioerr.ErrType, op, "datatype is MPI_DATATYPE_NULL")
	}
	if count == 0 {
		return nil
	}
	size, err := dt.Size()
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	_, ext, err := dt.Extent()
	if err != nil {
		return err
	}
	tlb, text, err := dt.TrueExtent()
	if err != nil {
		return err
	}
	last := int64(count - 1)
	if ext != 0 && (last > math.MaxInt64/absInt64(ext)) {
		return ioerr.New(ioerr.ErrArg, op, "%d instances of a %d-byte extent overflow", count, ext)
	}
	span := last * ext
	lo := tlb + min(0, span)
	hi := tlb + text + max(0, span)
	if lo < 0 || hi > int64(len(buf)) {
		return ioerr.New(ioerr.ErrArg, op, "%d instances of the datatype touch bytes [%d, %d) but the buffer has %d",
			count, lo, hi, len(buf))
	}
	return nil
}

func absInt64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
