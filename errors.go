package collio

import "github.com/collio/collio/internal/ioerr"

// Error classes. Every error collio returns wraps one of them, so callers
// can test with errors.Is(err, collio.ErrNoSpace). The concrete error
// (*Error) also says which operation, path and rank failed.
var (
	ErrArg         = ioerr.ErrArg         // an argument is invalid (negative offset, short buffer, ...)
	ErrNoSpace     = ioerr.ErrNoSpace     // the file system is full (ENOSPC)
	ErrQuota       = ioerr.ErrQuota       // quota exceeded (EDQUOT)
	ErrAccess      = ioerr.ErrAccess      // permission denied, or reading a write-only file
	ErrReadOnly    = ioerr.ErrReadOnly    // writing a file opened read-only
	ErrNotFound    = ioerr.ErrNotFound    // the file or directory does not exist
	ErrExists      = ioerr.ErrExists      // exclusive create of an existing file
	ErrBadHint     = ioerr.ErrBadHint     // a known hint has an invalid value
	ErrNotSame     = ioerr.ErrNotSame     // ranks passed different values where they must agree
	ErrIO          = ioerr.ErrIO          // an I/O error (EIO, ...)
	ErrAmode       = ioerr.ErrAmode       // an invalid access mode
	ErrBadFile     = ioerr.ErrBadFile     // a closed or nil file
	ErrType        = ioerr.ErrType        // an invalid datatype or view
	ErrUnsupported = ioerr.ErrUnsupported // the operation is not supported here
	ErrComm        = ioerr.ErrInternComm  // communication between ranks failed
	ErrFileInUse   = ioerr.ErrFileInUse   // closing with nonblocking transfers not waited for
	ErrTimeout     = ioerr.ErrTimeout     // not every rank joined a collective call within collio_collective_timeout
)

// Error is the concrete type of most errors collio returns: the class, the
// operation, the path, the rank (-1 when it concerns all ranks) and the
// problem in words. Errors that happened on another rank and were agreed on
// in a collective call carry the same class and text but may not be *Error.
type Error = ioerr.Error

// ErrorClass returns the class of err (one of the Err* values), or nil.
func ErrorClass(err error) error {
	if c := ioerr.ClassOf(err); c != nil {
		return c
	}
	return nil
}
