package mpi

// The predefined handles are addresses of libmpi globals in Open MPI, so
// they are read through small C functions rather than as cgo constants.

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static MPI_Datatype collio_type_char(void)      { return MPI_CHAR; }
// static MPI_Datatype collio_type_short(void)     { return MPI_SHORT; }
// static MPI_Datatype collio_type_int(void)       { return MPI_INT; }
// static MPI_Datatype collio_type_long(void)      { return MPI_LONG; }
// static MPI_Datatype collio_type_int64(void)     { return MPI_INT64_T; }
// static MPI_Datatype collio_type_float(void)     { return MPI_FLOAT; }
// static MPI_Datatype collio_type_double(void)    { return MPI_DOUBLE; }
// static MPI_Datatype collio_type_short_int(void) { return MPI_SHORT_INT; }
import "C"

// TypeChar is MPI_CHAR.
func TypeChar() Datatype { return Datatype{C.collio_type_char()} }

// TypeShort is MPI_SHORT.
func TypeShort() Datatype { return Datatype{C.collio_type_short()} }

// TypeInt is MPI_INT.
func TypeInt() Datatype { return Datatype{C.collio_type_int()} }

// TypeLong is MPI_LONG.
func TypeLong() Datatype { return Datatype{C.collio_type_long()} }

// TypeInt64 is MPI_INT64_T.
func TypeInt64() Datatype { return Datatype{C.collio_type_int64()} }

// TypeFloat is MPI_FLOAT.
func TypeFloat() Datatype { return Datatype{C.collio_type_float()} }

// TypeDouble is MPI_DOUBLE.
func TypeDouble() Datatype { return Datatype{C.collio_type_double()} }

// TypeShortInt is MPI_SHORT_INT: a short and an int with a hole between
// them (size 6, extent 8).
func TypeShortInt() Datatype { return Datatype{C.collio_type_short_int()} }
