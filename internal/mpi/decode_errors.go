//go:build cgo

package mpi

import (
	"errors"
	"fmt"

	"github.com/collio/collio/internal/ioerr"
)

const decodeOp = "decode datatype"

// decodeWrap prefixes the combiner being decoded, so that an error deep in
// a nested type reads as a path: "MPI_COMBINER_STRUCT / MPI_COMBINER_VECTOR:
// ...". Errors from outside the decoder (MPI, layout) keep their cause.
func decodeWrap(combiner string, err error) error {
	if err == nil {
		return nil
	}
	var e *ioerr.Error
	if errors.As(err, &e) && e.Op == decodeOp {
		c := *e
		c.Msg = combiner + " / " + e.Msg
		return &c
	}
	class := ioerr.ClassOf(err)
	if class == ioerr.ErrOther {
		class = ioerr.ErrType // a mismatch with what MPI reports
	}
	return &ioerr.Error{Class: class, Op: decodeOp, Rank: -1, Msg: combiner + ": " + err.Error(), Err: err}
}

// decodeUnsupported reports a type the decoder cannot describe.
func decodeUnsupported(combiner, format string, args ...any) error {
	return ioerr.New(ioerr.ErrUnsupported, decodeOp, "%s: %s", combiner, fmt.Sprintf(format, args...))
}
