// Command libcollio is collio's C shared library (built with
// -buildmode=c-shared, see the Makefile's lib target): the C API of
// collio.h, and a drop-in replacement of the host MPI's MPI_File_*
// functions, so that unmodified C programs do their file I/O through collio
// when they are linked with libcollio (before libmpi) or run with
// mpirun -x LD_PRELOAD=/path/libcollio.so.
//
// The C files (one per concern, listed in shim_internal.h) hold the
// definitions with the exact prototypes of mpi.h (cgo cannot express const
// in exported signatures); they forward to the Go exports of this package
// with plain C types. Files whose path is passed through
// (COLLIO_PASSTHROUGH, or a config rule) are opened with PMPI_File_open,
// and every later call on their handle goes to PMPI_File_*.
//
// README.md in this directory documents the environment variables, the
// per-path hints configuration file and the shared file pointer scheme.
package main

// #cgo pkg-config: ompi-c
// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/gocores"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
)

func main() {}

// The library's Go runtime takes its rank's share of the node's CPUs, not
// all of them (collio.ShareCores); GOMAXPROCS in the environment wins.
func init() { gocores.Share() }

// codeError is an error that carries its MPI error class directly, for
// the cases collio's error classes do not name (MPI_ERR_COUNT, ...). Its
// text takes the context of ioerr.Error (operation, path, rank) once
// withContext has filled it in.
type codeError struct {
	code C.int
	msg  string
	op   string
	path string
	rank int
}

func (e *codeError) Error() string {
	s := "collio"
	if e.op != "" {
		s += ": " + e.op
	}
	if e.path != "" {
		s += " " + e.path
	}
	if e.rank >= 0 {
		s += fmt.Sprintf(" (rank %d)", e.rank)
	}
	return s + ": " + e.msg
}

func errCode(code C.int, format string, args ...any) error {
	return &codeError{code: code, msg: fmt.Sprintf(format, args...), rank: -1}
}

// WithContext is withContext: adio's agreements give a local error of the
// C library's argument checks its context this way (ioerr.Contexter).
func (e *codeError) WithContext(op, path string, rank int) error {
	return withContext(e, op, path, rank)
}

// withContext gives err the operation, path and rank it lacks: a
// *codeError or an *ioerr.Error (itself, not one wrapped inside another
// error, whose outer text would be lost); other errors are returned as
// they are.
func withContext(err error, op, path string, rank int) error {
	switch e := err.(type) {
	case *codeError:
		c := *e
		if c.op == "" {
			c.op = op
		}
		if c.path == "" {
			c.path = path
		}
		if c.rank < 0 {
			c.rank = rank
		}
		return &c
	case *ioerr.Error:
		return ioerr.Wrap(e, op, path, rank)
	}
	return err
}

// ctx is withContext for an error on f.
func (f *file) ctx(op string, err error) error {
	if err == nil {
		return nil
	}
	return withContext(err, op, f.path, f.comm.Rank())
}

// mpiClasses maps collio's error classes to MPI error classes.
var mpiClasses = map[*ioerr.Class]C.int{
	ioerr.ErrArg:         C.MPI_ERR_ARG,
	ioerr.ErrNoSpace:     C.MPI_ERR_NO_SPACE,
	ioerr.ErrAccess:      C.MPI_ERR_ACCESS,
	ioerr.ErrNotFound:    C.MPI_ERR_NO_SUCH_FILE,
	ioerr.ErrExists:      C.MPI_ERR_FILE_EXISTS,
	ioerr.ErrBadHint:     C.MPI_ERR_INFO_VALUE,
	ioerr.ErrNotSame:     C.MPI_ERR_NOT_SAME,
	ioerr.ErrIO:          C.MPI_ERR_IO,
	ioerr.ErrReadOnly:    C.MPI_ERR_READ_ONLY,
	ioerr.ErrAmode:       C.MPI_ERR_AMODE,
	ioerr.ErrBadFile:     C.MPI_ERR_FILE,
	ioerr.ErrUnsupported: C.MPI_ERR_UNSUPPORTED_OPERATION,
	ioerr.ErrQuota:       C.MPI_ERR_QUOTA,
	ioerr.ErrType:        C.MPI_ERR_TYPE,
	ioerr.ErrFileInUse:   C.MPI_ERR_FILE_IN_USE,
	ioerr.ErrOther:       C.MPI_ERR_OTHER,
	ioerr.ErrInternComm:  C.MPI_ERR_INTERN,
	ioerr.ErrTimeout:     C.MPI_ERR_OTHER,
}

// classOf returns the MPI error class for err (MPI_SUCCESS for nil).
func classOf(err error) C.int {
	if err == nil {
		return C.MPI_SUCCESS
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	var me *mpi.Error
	if errors.As(err, &me) {
		return C.int(me.Class)
	}
	if c, ok := mpiClasses[ioerr.ClassOf(err)]; ok {
		return c
	}
	return C.MPI_ERR_OTHER
}

// lastErr is the message of the last error on this process, for
// collio_last_error and for the ERRORS_ARE_FATAL message.
var lastErr struct {
	sync.Mutex
	msg string
}

func setLastError(msg string) {
	lastErr.Lock()
	lastErr.msg = msg
	lastErr.Unlock()
}

// fail records err as the last error and returns its MPI class. It also
// hands the message to errcodes.c for the calling thread (fail runs on the
// thread of the C call that entered Go), where the MPI_File_* function
// returning the error turns class and message into an error code
// registered with the host MPI, so MPI_Error_string shows the message.
func fail(err error) C.int {
	if err == nil {
		return C.MPI_SUCCESS
	}
	msg := err.Error()
	setLastError(msg)
	class := classOf(err)
	short := shortMessage(err, msg, C.MPI_MAX_ERROR_STRING-1)
	C.collio_note_error(class, cstr(msg), C.int(len(msg)), cstr(short), C.int(len(short)))
	return class
}

// cstr points C at s's bytes for the duration of a call (not
// NUL-terminated: C takes the length too).
func cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}

// shortMessage fits msg, err's text, in max bytes for MPI_Add_error_string
// (MPI_MAX_ERROR_STRING-1 in Open MPI: 255). A long path loses its
// beginning first ("..." and its last 40 bytes), then the message its end.
func shortMessage(err error, msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	path := ""
	var ce *codeError
	var ie *ioerr.Error
	if errors.As(err, &ce) {
		path = ce.path
	} else if errors.As(err, &ie) {
		path = ie.Path
	}
	const keep = 40
	if len(path) > keep+3 && strings.Contains(msg, path) {
		tail := path[len(path)-keep:]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
		msg = strings.ReplaceAll(msg, path, "..."+tail)
	}
	if len(msg) <= max {
		return msg
	}
	cut := max - 3
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "..."
}

//export collioGoLastError
func collioGoLastError(buf *C.char, n C.int) C.int {
	lastErr.Lock()
	msg := lastErr.msg
	lastErr.Unlock()
	if buf != nil && n > 0 {
		out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(out[:n-1], msg)
		out[k] = 0
	}
	return C.int(len(msg))
}

//export collioGoSetLastError
func collioGoSetLastError(msg *C.char) { setLastError(C.GoString(msg)) }

// getenv reads the process environment through C, so that variables a
// program sets with setenv before MPI_File_open are seen (Go's os.Getenv
// only sees the environment as it was when the library was loaded).
func getenv(key string) string {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	v := C.getenv(ck)
	if v == nil {
		return ""
	}
	return C.GoString(v)
}

// verbose reports COLLIO_VERBOSE's level (0 when unset).
func verbose() int { return int(C.collio_verbose()) }

func worldRank() int { return int(C.collio_world_rank()) }

// envSwitch reads a switch variable (envvar.Vars); a value not accepted
// gives its default here and fails MPI_File_open (envvar.Check).
func envSwitch(name string) bool {
	on, _ := envvar.Switch(name, getenv(name))
	return on
}

// collioGoEnvInt is envvar.Int for the variables C reads (COLLIO_VERBOSE,
// COLLIO_ERROR_CODES, COLLIO_FAST_LANE, COLLIO_THREAD_MULTIPLE): the
// value, or the default when it is not accepted (MPI_File_open reports
// it).
//
//export collioGoEnvInt
func collioGoEnvInt(name *C.char) C.int {
	k := C.GoString(name)
	n, _ := envvar.Int(k, getenv(k))
	return C.int(n)
}

// reported keeps the environment errors already printed, once each.
var reported sync.Map

// reportEnv prints err, a switch variable's bad value, on stderr, once per
// process: a program that ignores MPI_File_open's error still sees it.
func reportEnv(err error) {
	if _, dup := reported.LoadOrStore(err.Error(), true); !dup {
		fmt.Fprintf(os.Stderr, "%v\n", err)
	}
}

// checkEnvAtInit tells, at MPI_Init on world rank 0, about switch
// variables whose value is not accepted, before the first open fails.
func checkEnvAtInit() {
	if err := envvar.Check(getenv); err != nil && worldRank() == 0 {
		reportEnv(fmt.Errorf("%w; MPI_File_open fails until it is fixed", err))
	}
}
