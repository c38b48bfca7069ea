// Package ioerr holds collio's error classes and the Error type that carries
// them. The root package re-exports the classes so that users can write
// errors.Is(err, collio.ErrNoSpace).
package ioerr

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Class is an error class, like an MPI error class. Each maps to the
// MPI_ERR_* class the C interposer returns.
type Class struct {
	name string
}

func (c *Class) Error() string { return c.name }

// Name is the class name as used in messages (for example "no space").
func (c *Class) Name() string { return c.name }

// The error classes. They are pointers so that errors.Is compares identity.
var (
	ErrArg         = &Class{"invalid argument"}
	ErrNoSpace     = &Class{"no space left on device"}
	ErrAccess      = &Class{"permission denied"}
	ErrNotFound    = &Class{"no such file"}
	ErrExists      = &Class{"file exists"}
	ErrBadHint     = &Class{"invalid hint"}
	ErrNotSame     = &Class{"argument differs between ranks"}
	ErrIO          = &Class{"I/O error"}
	ErrReadOnly    = &Class{"file is read-only"}
	ErrAmode       = &Class{"invalid access mode"}
	ErrBadFile     = &Class{"invalid file handle"}
	ErrUnsupported = &Class{"operation not supported"}
	ErrQuota       = &Class{"quota exceeded"}
	ErrType        = &Class{"invalid datatype"}
	ErrFileInUse   = &Class{"file in use"}
	ErrOther       = &Class{"error"}
	ErrInternComm  = &Class{"communication error"}
	ErrTimeout     = &Class{"timed out"}
)

// classes lists every class in a fixed order; the index is the class's wire
// code when errors travel between ranks.
var classes = []*Class{nil, ErrArg, ErrNoSpace, ErrAccess, ErrNotFound, ErrExists, ErrBadHint,
	ErrNotSame, ErrIO, ErrReadOnly, ErrAmode, ErrBadFile, ErrUnsupported, ErrQuota, ErrType,
	ErrFileInUse, ErrOther, ErrInternComm, ErrTimeout}

// Code returns the wire code of a class (0 for nil).
func Code(c *Class) int {
	for i, k := range classes {
		if k == c {
			return i
		}
	}
	return Code(ErrOther)
}

// FromCode is the inverse of Code.
func FromCode(code int) *Class {
	if code <= 0 || code >= len(classes) {
		return ErrOther
	}
	return classes[code]
}

// Error is an error with a class, the operation, the path and the rank on
// which it happened (-1 when not rank-specific).
type Error struct {
	Class *Class
	Op    string // e.g. "open", "write_at_all", "set_view"
	Path  string
	Rank  int
	Msg   string // the specific problem, in words
	Err   error  // underlying cause, may be nil
}

func (e *Error) Error() string {
	s := "collio"
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Rank >= 0 {
		s += fmt.Sprintf(" (rank %d)", e.Rank)
	}
	s += ": " + e.Class.name
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil && e.Msg == "" {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes errors.Is(err, Class) work.
func (e *Error) Is(target error) bool { return target == e.Class }

func (e *Error) Unwrap() error { return e.Err }

// New builds an Error of class c with a formatted message and no rank.
func New(c *Class, op, format string, args ...any) *Error {
	return &Error{Class: c, Op: op, Rank: -1, Msg: fmt.Sprintf(format, args...)}
}

// ClassOf returns the class of err: its own if it is (or wraps) an *Error,
// else one derived from a wrapped errno, else ErrOther. nil gives nil.
func ClassOf(err error) *Class {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	var c *Class
	if errors.As(err, &c) {
		return c
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return FromErrno(errno)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case errors.Is(err, fs.ErrExist):
		return ErrExists
	case errors.Is(err, fs.ErrPermission):
		return ErrAccess
	}
	return ErrOther
}

// FromErrno maps a system errno to a class.
func FromErrno(e syscall.Errno) *Class {
	switch e {
	case syscall.ENOSPC:
		return ErrNoSpace
	case syscall.EDQUOT:
		return ErrQuota
	case syscall.EACCES, syscall.EPERM:
		return ErrAccess
	case syscall.EROFS:
		return ErrReadOnly
	case syscall.ENOENT, syscall.ENOTDIR:
		return ErrNotFound
	case syscall.EEXIST:
		return ErrExists
	case syscall.EIO:
		return ErrIO
	case syscall.EINVAL:
		return ErrArg
	case syscall.EBADF:
		return ErrBadFile
	case syscall.ENOSYS, syscall.EOPNOTSUPP:
		return ErrUnsupported
	case syscall.ETXTBSY, syscall.EBUSY:
		return ErrFileInUse
	}
	return ErrIO
}

// Contexter is an error of another package that carries its own class
// and formats op, path and rank itself (the C library's errors with an
// MPI error class): Wrap gives it the context it lacks instead of
// wrapping it, so that its text does not name the call twice.
type Contexter interface {
	error
	WithContext(op, path string, rank int) error
}

// Wrap classifies err (keeping it as the cause) and attaches op, path and
// rank. An err that is already an *Error keeps its class and message and
// gains the missing context, as does a Contexter. nil stays nil.
func Wrap(err error, op, path string, rank int) error {
	if err == nil {
		return nil
	}
	if c, ok := err.(Contexter); ok {
		return c.WithContext(op, path, rank)
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		if c.Op == "" {
			c.Op = op
		}
		if c.Path == "" {
			c.Path = path
		}
		if c.Rank < 0 {
			c.Rank = rank
		}
		return &c
	}
	return &Error{Class: ClassOf(err), Op: op, Path: path, Rank: rank, Err: err}
}
