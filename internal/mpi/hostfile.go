package mpi

// #cgo pkg-config: ompi-c
// #include <stdlib.h>
// #include <mpi.h>
// static MPI_File collio_file_null(void) { return MPI_FILE_NULL; }
// static int collio_file_errors_return(MPI_File fh) {
//   return MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
// }
import "C"

import (
	"unsafe"

	"github.com/collio/collio/internal/ioerr"
)

// HostFile is a file opened with the host MPI's own MPI-IO (ROMIO or
// OMPIO), so that tests and benchmarks can compare collio with it on the
// same run. It is a thin pass-through: every method is one MPI_File_* call.
// Errors come back as *ioerr.Error values classed from MPI's error class
// (the file uses MPI_ERRORS_RETURN, MPI's default for files).
type HostFile struct {
	fh   C.MPI_File
	path string
}

// Access modes for HostOpen, with MPI's values; combine them with |.
const (
	ModeRdOnly        = C.MPI_MODE_RDONLY
	ModeWrOnly        = C.MPI_MODE_WRONLY
	ModeRdWr          = C.MPI_MODE_RDWR
	ModeCreate        = C.MPI_MODE_CREATE
	ModeExcl          = C.MPI_MODE_EXCL
	ModeDeleteOnClose = C.MPI_MODE_DELETE_ON_CLOSE
	ModeAppend        = C.MPI_MODE_APPEND
	ModeUniqueOpen    = C.MPI_MODE_UNIQUE_OPEN
	ModeSequential    = C.MPI_MODE_SEQUENTIAL
)

// HostOpen is MPI_File_open, collective over c. hints may be nil.
func HostOpen(c Comm, path string, amode int, hints map[string]string) (*HostFile, error) {
	const op = "MPI_File_open"
	if c.c == nil || c.IsNull() {
		return nil, ioerr.New(ioerr.ErrArg, op, "communicator is MPI_COMM_NULL")
	}
	info, err := hintsInfo(hints)
	if err != nil {
		return nil, err
	}
	defer freeHintsInfo(info)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	f := &HostFile{fh: C.collio_file_null(), path: path}
	if err := fileError(C.MPI_File_open(c.c, cpath, C.int(amode), info.i, &f.fh), op, path); err != nil {
		return nil, err
	}
	// Keep errors as return codes even if the application changed the
	// default file error handler.
	if err := fileError(C.collio_file_errors_return(f.fh), "MPI_File_set_errhandler", path); err != nil {
		C.MPI_File_close(&f.fh)
		return nil, err
	}
	return f, nil
}

// HostDelete is MPI_File_delete.
func HostDelete(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return fileError(C.MPI_File_delete(cpath, InfoNull().i), "MPI_File_delete", path)
}

// Close is MPI_File_close (collective). Closing twice is an error.
func (f *HostFile) Close() error {
	if err := f.usable("MPI_File_close"); err != nil {
		return err
	}
	return fileError(C.MPI_File_close(&f.fh), "MPI_File_close", f.path)
}

// SetView is MPI_File_set_view (collective). datarep "" means "native".
func (f *HostFile) SetView(disp int64, etype, filetype Datatype, datarep string, hints map[string]string) error {
	const op = "MPI_File_set_view"
	if err := f.usable(op); err != nil {
		return err
	}
	if etype.unusable() || filetype.unusable() {
		return ioerr.New(ioerr.ErrType, op, "etype or filetype is MPI_DATATYPE_NULL or not a datatype handle")
	}
	if datarep == "" {
		datarep = "native"
	}
	info, err := hintsInfo(hints)
	if err != nil {
		return err
	}
	defer freeHintsInfo(info)
	crep := C.CString(datarep)
	defer C.free(unsafe.Pointer(crep))
	return fileError(C.MPI_File_set_view(f.fh, C.MPI_Offset(disp), etype.t, filetype.t, crep, info.i), op, f.path)
}

// Size is MPI_File_get_size.
func (f *HostFile) Size() (int64, error) {
	if err := f.usable("MPI_File_get_size"); err != nil {
		return 0, err
	}
	var n C.MPI_Offset
	if err := fileError(C.MPI_File_get_size(f.fh, &n), "MPI_File_get_size", f.path); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// SetSize is MPI_File_set_size (collective).
func (f *HostFile) SetSize(n int64) error {
	if err := f.usable("MPI_File_set_size"); err != nil {
		return err
	}
	return fileError(C.MPI_File_set_size(f.fh, C.MPI_Offset(n)), "MPI_File_set_size", f.path)
}

// Sync is MPI_File_sync (collective).
func (f *HostFile) Sync() error {
	if err := f.usable("MPI_File_sync"); err != nil {
		return err
	}
	return fileError(C.MPI_File_sync(f.fh), "MPI_File_sync", f.path)
}

// Info is MPI_File_get_info: the hints the host MPI-IO reports in effect.
func (f *HostFile) Info() (map[string]string, error) {
	if err := f.usable("MPI_File_get_info"); err != nil {
		return nil, err
	}
	var i C.MPI_Info
	if err := fileError(C.MPI_File_get_info(f.fh, &i), "MPI_File_get_info", f.path); err != nil {
		return nil, err
	}
	in := Info{i}
	defer in.Free()
	return in.Map()
}

// usable refuses a nil or closed file before MPI sees its handle.
func (f *HostFile) usable(op string) error {
	if f == nil || f.fh == C.collio_file_null() {
		path := ""
		if f != nil {
			path = f.path
		}
		return &ioerr.Error{Class: ioerr.ErrBadFile, Op: op, Path: path, Rank: -1, Msg: "file is not open"}
	}
	return nil
}

// hintsInfo builds an info object for hints; none gives MPI_INFO_NULL.
func hintsInfo(hints map[string]string) (Info, error) {
	if len(hints) == 0 {
		return InfoNull(), nil
	}
	return InfoFromMap(hints)
}

func freeHintsInfo(in Info) {
	if !in.IsNull() {
		_ = in.Free()
	}
}
