package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_dt_null(void) { return MPI_DATATYPE_NULL; }
import "C"

import (
	"math"

	"github.com/collio/collio/internal/ioerr"
)

// Argument conversion for the datatype constructors. MPI takes C ints,
// so every value is range-checked here: an out-of-range value must become
// an error, not a silently truncated count.

func argError(op, format string, args ...any) error {
	return ioerr.New(ioerr.ErrArg, op, format, args...)
}

// cInt converts one argument that must lie in [min, MaxInt32].
func cInt(op, what string, v, min int) (C.int, error) {
	if v < min || v > math.MaxInt32 {
		return 0, argError(op, "%s = %d out of range [%d, %d]", what, v, min, math.MaxInt32)
	}
	return C.int(v), nil
}

// cInts converts a slice whose elements must all lie in [min, MaxInt32].
func cInts(op, what string, vs []int, min int) ([]C.int, error) {
	out := make([]C.int, len(vs))
	for i, v := range vs {
		if v < min || v > math.MaxInt32 {
			return nil, argError(op, "%s[%d] = %d out of range [%d, %d]", what, i, v, min, math.MaxInt32)
		}
		out[i] = C.int(v)
	}
	return out, nil
}

// cDispls converts int displacements, which may be negative.
func cDispls(op string, vs []int) ([]C.int, error) {
	out := make([]C.int, len(vs))
	for i, v := range vs {
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, argError(op, "displacement[%d] = %d does not fit a C int", i, v)
		}
		out[i] = C.int(v)
	}
	return out, nil
}

// cAints converts byte displacements to MPI_Aint (64-bit here).
func cAints(vs []int64) []C.MPI_Aint {
	out := make([]C.MPI_Aint, len(vs))
	for i, v := range vs {
		out[i] = C.MPI_Aint(v)
	}
	return out
}

// count converts the length of the argument slices.
func count(op string, n int) (C.int, error) { return cInt(op, "count", n, 0) }

// sameLen checks that paired slices have equal lengths.
func sameLen(op string, a, b int, an, bn string) error {
	if a != b {
		return argError(op, "len(%s) = %d but len(%s) = %d", an, a, bn, b)
	}
	return nil
}

// oldType checks a constructor's input type.
func oldType(op string, t Datatype) error {
	if t.unusable() {
		return ioerr.New(ioerr.ErrType, op, "input datatype is MPI_DATATYPE_NULL or not a datatype handle")
	}
	return nil
}

// aintPtr is like intPtr (buffers.go) for MPI_Aint slices.
func aintPtr(s []C.MPI_Aint) *C.MPI_Aint {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// committed commits a new type, freeing it if the commit fails.
func committed(t Datatype, rc C.int, call string) (Datatype, error) {
	if err := check(rc, call); err != nil {
		return nullType(), err
	}
	if err := t.Commit(); err != nil {
		_ = t.Free()
		return nullType(), err
	}
	return t, nil
}

// nullType is MPI_DATATYPE_NULL, returned alongside errors.
func nullType() Datatype { return Datatype{C.collio_dt_null()} }
