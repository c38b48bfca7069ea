package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// static int collio_thread_single(void)     { return MPI_THREAD_SINGLE; }
// static int collio_thread_funneled(void)   { return MPI_THREAD_FUNNELED; }
// static int collio_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
// static int collio_thread_multiple(void)   { return MPI_THREAD_MULTIPLE; }
// static int collio_max_processor_name(void) { return MPI_MAX_PROCESSOR_NAME; }
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// ThreadLevel is an MPI thread-support level.
type ThreadLevel int

// Thread levels, in increasing order of support.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// The MPI standard only fixes the order of the thread levels, not their
// values, so they are translated both ways.
func (l ThreadLevel) c() C.int {
	switch l {
	case ThreadSingle:
		return C.collio_thread_single()
	case ThreadFunneled:
		return C.collio_thread_funneled()
	case ThreadSerialized:
		return C.collio_thread_serialized()
	}
	return C.collio_thread_multiple()
}

func threadLevelFromC(v C.int) ThreadLevel {
	switch v {
	case C.collio_thread_single():
		return ThreadSingle
	case C.collio_thread_funneled():
		return ThreadFunneled
	case C.collio_thread_serialized():
		return ThreadSerialized
	}
	return ThreadMultiple
}

// owner records whether collio called MPI_Init_thread, so that Finalize
// never finalises an MPI that the application initialised (a second
// MPI_Finalize aborts the job).
var owner struct {
	sync.Mutex
	initialised bool
}

// Init initialises MPI with MPI_THREAD_MULTIPLE unless it is already
// initialised, in which case it only reports the level the application
// chose. Calling it again is harmless.
//
// MPI must be initialised and used from a consistent OS thread when the
// provided level is below MULTIPLE, and Open MPI ties some state to the
// initialising thread: the main package of a program should call
// runtime.LockOSThread() in an init function, so that main (and Init)
// run on the process's main thread.
func Init() (provided ThreadLevel, err error) {
	owner.Lock()
	defer owner.Unlock()
	if Finalized() {
		return ThreadSingle, fmt.Errorf("mpi: Init called after MPI_Finalize")
	}
	if Initialized() {
		var p C.int
		if rc := C.MPI_Query_thread(&p); rc != C.MPI_SUCCESS {
			return ThreadSingle, newError(rc, "MPI_Query_thread")
		}
		return threadLevelFromC(p), nil
	}
	var p C.int
	if rc := C.MPI_Init_thread(nil, nil, ThreadMultiple.c(), &p); rc != C.MPI_SUCCESS {
		return ThreadSingle, newError(rc, "MPI_Init_thread")
	}
	owner.initialised = true
	return threadLevelFromC(p), nil
}

// Finalize calls MPI_Finalize if collio initialised MPI and it is not yet
// finalised; otherwise it does nothing, leaving finalisation to the
// application that initialised MPI.
func Finalize() error {
	owner.Lock()
	defer owner.Unlock()
	if !owner.initialised || Finalized() {
		return nil
	}
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS {
		return newError(rc, "MPI_Finalize")
	}
	return nil
}

// OwnsMPI reports whether collio initialised MPI (and so will finalise it).
func OwnsMPI() bool {
	owner.Lock()
	defer owner.Unlock()
	return owner.initialised
}

// Initialized reports whether MPI_Init has been called.
func Initialized() bool {
	var flag C.int
	C.MPI_Initialized(&flag)
	return flag != 0
}

// Finalized reports whether MPI_Finalize has been called.
func Finalized() bool {
	var flag C.int
	C.MPI_Finalized(&flag)
	return flag != 0
}

// Wtime is MPI_Wtime: seconds since an arbitrary time in the past.
func Wtime() float64 { return float64(C.MPI_Wtime()) }

// ProcessorName is MPI_Get_processor_name.
func ProcessorName() (string, error) {
	buf := make([]byte, int(C.collio_max_processor_name())+1)
	var n C.int
	if rc := C.MPI_Get_processor_name((*C.char)(unsafe.Pointer(&buf[0])), &n); rc != C.MPI_SUCCESS {
		return "", newError(rc, "MPI_Get_processor_name")
	}
	return string(buf[:int(n)]), nil
}

// Abort is MPI_Abort: it terminates every process of c's job with code.
// It does not return if MPI honours it.
func Abort(c Comm, code int) error {
	if rc := C.MPI_Abort(c.c, C.int(code)); rc != C.MPI_SUCCESS {
		return newError(rc, "MPI_Abort")
	}
	return nil
}

// ConcurrentCalls reports whether several threads may call MPI at once
// (MPI_THREAD_MULTIPLE was provided), which nonblocking collective I/O
// needs to progress in the background. The level never changes once MPI
// runs, so it is asked once.
func (c Comm) ConcurrentCalls() bool {
	threadLevel.once.Do(func() {
		var p C.int
		if Initialized() && !Finalized() && C.MPI_Query_thread(&p) == C.MPI_SUCCESS {
			threadLevel.multiple = threadLevelFromC(p) == ThreadMultiple
		}
	})
	return threadLevel.multiple
}

var threadLevel struct {
	once     sync.Once
	multiple bool
}
