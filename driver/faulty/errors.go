package faulty

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// Injected is the cause inside every error that a rule injects. It
// unwraps to the errno, so errors.Is(err, syscall.EIO) and collio's error
// classes see through it; a short write also matches io.ErrShortWrite.
type Injected struct {
	Rule  Rule
	Errno syscall.Errno
	Short bool // a short write: Is(io.ErrShortWrite)
}

func (e *Injected) Error() string {
	if e.Short {
		return fmt.Sprintf("short write (injected by fault rule %s)", e.Rule)
	}
	return fmt.Sprintf("%v (injected by fault rule %s)", e.Errno, e.Rule)
}

func (e *Injected) Unwrap() error { return e.Errno }

// Is makes a short write match io.ErrShortWrite.
func (e *Injected) Is(target error) bool { return e.Short && target == io.ErrShortWrite }

// IsInjected reports whether err came from a fault rule rather than from
// the inner driver.
func IsInjected(err error) bool {
	var inj *Injected
	return errors.As(err, &inj)
}

// errShortInner reports an inner driver that wrote less without an error.
type errShortInner struct{}

func (*errShortInner) Error() string        { return "inner driver wrote short without an error" }
func (*errShortInner) Is(target error) bool { return target == io.ErrShortWrite }
