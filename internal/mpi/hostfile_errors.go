package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import "github.com/collio/collio/internal/ioerr"

// mpiFileClasses maps MPI's I/O error classes to collio's, so that tests
// can compare the host MPI-IO's errors with collio's by class.
var mpiFileClasses = map[int]*ioerr.Class{
	C.MPI_ERR_NO_SUCH_FILE:          ioerr.ErrNotFound,
	C.MPI_ERR_ACCESS:                ioerr.ErrAccess,
	C.MPI_ERR_FILE_EXISTS:           ioerr.ErrExists,
	C.MPI_ERR_NO_SPACE:              ioerr.ErrNoSpace,
	C.MPI_ERR_QUOTA:                 ioerr.ErrQuota,
	C.MPI_ERR_AMODE:                 ioerr.ErrAmode,
	C.MPI_ERR_READ_ONLY:             ioerr.ErrReadOnly,
	C.MPI_ERR_FILE_IN_USE:           ioerr.ErrFileInUse,
	C.MPI_ERR_BAD_FILE:              ioerr.ErrBadFile,
	C.MPI_ERR_FILE:                  ioerr.ErrBadFile,
	C.MPI_ERR_IO:                    ioerr.ErrIO,
	C.MPI_ERR_NOT_SAME:              ioerr.ErrNotSame,
	C.MPI_ERR_TYPE:                  ioerr.ErrType,
	C.MPI_ERR_ARG:                   ioerr.ErrArg,
	C.MPI_ERR_COUNT:                 ioerr.ErrArg,
	C.MPI_ERR_INFO:                  ioerr.ErrBadHint,
	C.MPI_ERR_UNSUPPORTED_OPERATION: ioerr.ErrUnsupported,
	C.MPI_ERR_UNSUPPORTED_DATAREP:   ioerr.ErrUnsupported,
}

// fileError turns a failed MPI_File_* return code into a classed error
// that carries MPI's message and keeps the *Error as its cause.
func fileError(rc C.int, call, path string) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	e := newError(rc, call)
	class, ok := mpiFileClasses[e.Class]
	if !ok {
		class = ioerr.ErrOther
	}
	return &ioerr.Error{Class: class, Op: call, Path: path, Rank: -1, Msg: e.Msg, Err: e}
}
