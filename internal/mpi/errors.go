package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static int collio_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
// static int collio_err_truncate(void) { return MPI_ERR_TRUNCATE; }
// static int collio_set_errors_return(MPI_Comm c) {
//   return MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
// }
import "C"

import (
	"fmt"
	"unsafe"
)

// Error is a failed MPI call: the return code, its error class, the text
// MPI_Error_string gives for the code, and the name of the call.
type Error struct {
	Code  int
	Class int
	Msg   string
	Call  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("mpi: %s failed: %s (code %d, class %d)", e.Call, e.Msg, e.Code, e.Class)
}

// IsTruncate reports whether the error's class is MPI_ERR_TRUNCATE.
func (e *Error) IsTruncate() bool { return e.Class == int(C.collio_err_truncate()) }

// newError converts an MPI return code into an *Error. It is only called
// with codes other than MPI_SUCCESS.
func newError(rc C.int, call string) *Error {
	e := &Error{Code: int(rc), Class: int(rc), Call: call, Msg: "unknown MPI error"}
	var class C.int
	if C.MPI_Error_class(rc, &class) == C.MPI_SUCCESS {
		e.Class = int(class)
	}
	buf := make([]byte, int(C.collio_max_error_string())+1)
	var n C.int
	if C.MPI_Error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n) == C.MPI_SUCCESS && n > 0 {
		e.Msg = string(buf[:int(n)])
	}
	return e
}

// check returns nil for MPI_SUCCESS and an *Error otherwise.
func check(rc C.int, call string) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	return newError(rc, call)
}

// CodeError is check for cgo code outside this package (cdatatypes),
// whose C.int is another type: nil for MPI_SUCCESS, an *Error otherwise.
func CodeError(rc int, call string) error { return check(C.int(rc), call) }

// setErrorsReturn makes MPI report errors on c as return codes instead of
// aborting. Only used on communicators collio created itself.
func setErrorsReturn(c Comm) error {
	return check(C.collio_set_errors_return(c.c), "MPI_Comm_set_errhandler")
}
