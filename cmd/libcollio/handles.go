package main

// #include "shim.h"
import "C"

import (
	"sync"
	"unsafe"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/internal/mpi"
)

// Handles. An MPI_File that collio returns is an address inside a
// PROT_NONE reservation (handles.c): pointer-sized, unique while the file is
// open, never MPI_FILE_NULL, not a Go pointer, and recognisable by range, so
// a stray use by an un-intercepted Open MPI function faults at once instead
// of corrupting memory. Slot i is base + i*slotBytes; slots are reused after
// close, like MPI handles.
const slotBytes = 64

// fintBase offsets collio's Fortran handles (MPI_File_c2f) far above Open
// MPI's small table indices.
const fintBase = 1 << 30

// file is one open collio file.
type file struct {
	h    uintptr
	slot int
	f    *adio.File
	comm mpi.Comm // the file's private communicator (adio's duplicate)
	path string

	// The view's etype and filetype as the application passed them, for
	// MPI_File_get_view.
	etype, ftype viewType
	datarep      string
	// The error handler (a reference collio holds).
	eh C.MPI_Errhandler

	// stats counts the calls (collio_file_stats, and the report at close
	// with COLLIO_STATS); xoff is where the last shared or ordered
	// transfer began.
	stats *fileStats
	xoff  int64

	// laneArmed: calls may be going through the fast lane (lane.go).
	laneArmed bool

	// The split collective in progress (MPI allows one per file).
	split struct {
		active bool
		op     int
		n      int64
		x      *asyncXfer // the transfer a collective _begin started
	}
}

var registry struct {
	sync.Mutex
	files map[uintptr]*file
	free  []int
	next  int
}

// register assigns a handle to f.
func register(f *file) error {
	base := uintptr(C.collio_handle_base())
	if base == 0 {
		return errCode(C.MPI_ERR_NO_MEM, "cannot reserve the address range for file handles")
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.files == nil {
		registry.files = make(map[uintptr]*file)
	}
	slot := -1
	if n := len(registry.free); n > 0 {
		slot, registry.free = registry.free[n-1], registry.free[:n-1]
	} else if registry.next < int(C.collio_handle_span())/slotBytes {
		slot = registry.next
		registry.next++
	}
	if slot < 0 {
		return errCode(C.MPI_ERR_NO_MEM, "too many open files (%d)", len(registry.files))
	}
	f.slot, f.h = slot, base+uintptr(slot)*slotBytes
	registry.files[f.h] = f
	return nil
}

func unregister(f *file) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.files, f.h)
	registry.free = append(registry.free, f.slot)
}

// lookup finds the open file behind a handle.
func lookup(h C.uintptr_t) (*file, error) {
	registry.Lock()
	f := registry.files[uintptr(h)]
	registry.Unlock()
	if f == nil {
		return nil, ioerr.New(ioerr.ErrBadFile, "", "not an open collio file handle (closed, or never opened)")
	}
	f.takeLane() // every call into Go on a file ends what the lane served
	return f, nil
}

//export collioGoValid
func collioGoValid(h C.uintptr_t) C.int {
	_, err := lookup(h)
	return fail(err)
}

//export collioGoFint
func collioGoFint(h C.uintptr_t) C.int {
	f, err := lookup(h)
	if err != nil {
		return 0 // MPI_FILE_NULL's Fortran handle
	}
	return C.int(fintBase + f.slot)
}

// collioGoFromFint returns the handle for a collio Fortran handle, 1 for a
// collio index that is not open, and 0 for an index that is not collio's.
//
//export collioGoFromFint
func collioGoFromFint(fint C.int) C.uintptr_t {
	i := int(fint) - fintBase
	if i < 0 || i >= int(C.collio_handle_span())/slotBytes {
		return 0
	}
	base := uintptr(C.collio_handle_base())
	h := base + uintptr(i)*slotBytes
	if _, err := lookup(C.uintptr_t(h)); err != nil {
		return 1
	}
	return C.uintptr_t(h)
}

//export collioGoErrhandler
func collioGoErrhandler(h C.uintptr_t, eh *unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	*eh = unsafe.Pointer(f.eh)
	return C.MPI_SUCCESS
}

// collioGoSwapErrhandler installs eh (a reference the caller took) and
// hands the old one's reference back in old.
//
//export collioGoSwapErrhandler
func collioGoSwapErrhandler(h C.uintptr_t, eh unsafe.Pointer, old *unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	*old = unsafe.Pointer(f.eh)
	f.eh = C.MPI_Errhandler(eh)
	return C.MPI_SUCCESS
}
