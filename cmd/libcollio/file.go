package main

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/collio/collio/adio"
	_ "github.com/collio/collio/driver/beegfs" // beegfs: stripe info and layout through BeeGFS ioctls
	_ "github.com/collio/collio/driver/faulty" // faulty: fault injection (collio_fault)
	_ "github.com/collio/collio/driver/lustre" // lustre: striping through LL_IOC_LOV_*STRIPE, detected by statfs
	_ "github.com/collio/collio/driver/sim"    // sim: emulated striped file system
	_ "github.com/collio/collio/driver/ufs"    // the default driver
	_ "github.com/collio/collio/independent"   // independent: each rank's own I/O, data sieving
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/gocores"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/layout"
	_ "github.com/collio/collio/segment"  // dynamic, static: OMPIO's segmentations
	_ "github.com/collio/collio/tam"      // tam: two-layer aggregation
	_ "github.com/collio/collio/twophase" // twophase: ROMIO's two-phase, affinity domains
)

// infoMap reads an MPI_Info's pairs (MPI_INFO_NULL gives none).
func infoMap(info C.MPI_Info) map[string]string {
	if info == C.collio_info_null() {
		return map[string]string{}
	}
	m, err := mpi.InfoFromFint(int32(C.collio_info_fint(info))).Map()
	if err != nil {
		return map[string]string{}
	}
	return m
}

//export collioGoRoute
func collioGoRoute(path *C.char) C.int {
	if passthrough(C.GoString(path)) {
		return 1
	}
	return 0
}

//export collioGoOpen
func collioGoOpen(commp unsafe.Pointer, path *C.char, amode C.int, info unsafe.Pointer, flags C.int, out *C.uintptr_t) C.int {
	*out = 0
	start := time.Now()
	// Before adio.Open: a failed open may leave a deferred close behind.
	C.collio_note_open()
	p := C.GoString(path)
	c := mpi.CommFromPointer(commp)
	rank := c.Rank()
	user := infoMap(C.MPI_Info(info))
	h := filterHints(openHints(p, user), rank)
	// Every switch variable, also those read elsewhere (in C, at MPI_Init):
	// a value not accepted fails the open on every rank.
	envErr := envvar.Check(getenv)
	af, err := adio.Open(withServers(c), p, adio.Mode(amode), adio.OpenOptions{Hints: h, Lenient: true, Getenv: getenv,
		NoSharedPointer: sharedPointerOff(), Local: envErr})
	if err != nil {
		if errors.Is(err, envvar.ErrBadValue) {
			reportEnv(err) // the lowest rank with a bad value; the others get its error
		}
		return fail(err)
	}
	fc, ok := af.Comm().(mpi.Comm)
	if !ok {
		af.Close()
		return fail(withContext(errCode(C.MPI_ERR_INTERN, "adio's communicator is not an MPI communicator"), "open", p, rank))
	}
	f := &file{f: af, comm: fc, path: p, etype: byteViewType(), ftype: byteViewType(), datarep: "native",
		stats: newFileStats(rank, start)}
	if err := register(f); err != nil {
		af.Close()
		return fail(withContext(err, "open", p, rank))
	}
	f.eh = C.collio_default_errhandler()
	if verbose() > 0 && rank == 0 {
		fmt.Fprintf(os.Stderr, "collio[%d]: opened %s (%s) with collio, handle %#x\n", worldRank(), p, adio.Mode(amode), f.h)
	}
	*out = C.uintptr_t(f.h)
	return C.MPI_SUCCESS
}

//export collioGoClose
func collioGoClose(h C.uintptr_t, eh *unsafe.Pointer) C.int {
	*eh = nil
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	unregister(f)
	*eh = unsafe.Pointer(f.eh)
	if f.stats.reporting() {
		f.report() // collective, before the file's communicator goes
	}
	rank := f.comm.Rank() // not after Close: the communicator goes with the file
	f.etype.drop()
	f.ftype.drop()
	err = f.f.Close()
	return fail(withContext(err, "close", f.path, rank))
}

//export collioGoDelete
func collioGoDelete(path *C.char, info unsafe.Pointer) C.int {
	return fail(adio.Delete(C.GoString(path)))
}

//export collioGoSetView
func collioGoSetView(h C.uintptr_t, disp C.longlong, etype, ftype unsafe.Pointer, datarep *C.char, info unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	var local error
	rep := ""
	if datarep == nil {
		local = errCode(C.MPI_ERR_ARG, "datarep is NULL")
	} else if rep = C.GoString(datarep); !nativeRep(rep) {
		local = errCode(C.MPI_ERR_UNSUPPORTED_DATAREP, "data representation %q is not supported (only \"native\" and \"internal\", which collio treats as native)", rep)
	}
	if local == nil {
		local = checkDisp(int64(disp), f.f.Mode()&adio.ModeSequential != 0)
	}
	view := adio.View{Disp: int64(disp)}
	var et, ft viewType
	if local == nil {
		view.Etype, et, local = decodeViewType(etype, "etype")
	}
	if local == nil {
		view.Filetype, ft, local = decodeViewType(ftype, "filetype")
	}
	hs := filterHints(infoMap(C.MPI_Info(info)), f.comm.Rank())
	// This rank's argument error is agreed within set_view's own step.
	current := disp == C.MPI_DISPLACEMENT_CURRENT
	if err := f.f.SetViewChecked(local, current, view, hs); err != nil {
		et.drop()
		ft.drop()
		return fail(f.ctx("set_view", err))
	}
	f.etype.drop()
	f.ftype.drop()
	f.etype, f.ftype, f.datarep = et, ft, rep
	return C.MPI_SUCCESS
}

// checkDisp checks a view's displacement: MPI allows a byte offset >= 0,
// or MPI_DISPLACEMENT_CURRENT on a file opened with MPI_MODE_SEQUENTIAL.
func checkDisp(disp int64, sequential bool) error {
	switch {
	case disp == C.MPI_DISPLACEMENT_CURRENT && sequential:
		return nil
	case disp == C.MPI_DISPLACEMENT_CURRENT:
		return errCode(C.MPI_ERR_ARG, "invalid displacement MPI_DISPLACEMENT_CURRENT: only files opened with MPI_MODE_SEQUENTIAL may use it")
	case disp < 0:
		return errCode(C.MPI_ERR_ARG, "invalid displacement %d: must be >= 0 or MPI_DISPLACEMENT_CURRENT", disp)
	}
	return nil
}

// nativeRep reports whether collio supports data representation rep:
// "native", and "internal", whose format MPI leaves to the implementation.
func nativeRep(rep string) bool {
	switch strings.ToLower(rep) {
	case "native", "internal":
		return true
	}
	return false
}

// decodeType turns an MPI datatype into collio's layout.
func decodeType(t unsafe.Pointer, what string) (lt *layout.Type, err error) {
	dt, err := notNullType(t, what)
	if err != nil {
		return nil, err
	}
	lt, err = dt.Layout()
	if err != nil {
		return nil, errCode(C.MPI_ERR_TYPE, "%s: %v", what, err)
	}
	return lt, nil
}

func notNullType(t unsafe.Pointer, what string) (mpi.Datatype, error) {
	dt := mpi.DatatypeFromPointer(t)
	if t == nil || dt.IsNull() {
		return dt, errCode(C.MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", what)
	}
	return dt, nil
}

// viewType is a view's etype or filetype kept for MPI_File_get_view, which
// must return an equal type after the program may have freed its own: the
// type itself when predefined, else the recipe decoding read (lists of
// blocks, where a copy would cost as much as the decoding) or a duplicate.
type viewType struct {
	t      C.MPI_Datatype // predefined or a duplicate, when recipe is nil
	recipe *mpi.Recipe
}

func byteViewType() viewType { return viewType{t: C.collio_type_byte()} }

// decodeViewType is decodeType, keeping t as a viewType.
func decodeViewType(t unsafe.Pointer, what string) (*layout.Type, viewType, error) {
	dt, err := notNullType(t, what)
	if err != nil {
		return nil, viewType{}, err
	}
	lt, r, err := dt.LayoutRecipe()
	if err != nil {
		return nil, viewType{}, errCode(C.MPI_ERR_TYPE, "%s: %v", what, err)
	}
	if r != nil {
		return lt, viewType{recipe: r}, nil
	}
	vt := viewType{t: C.MPI_Datatype(t)}
	if rc := C.collio_type_keep(C.MPI_Datatype(t), &vt.t); rc != C.MPI_SUCCESS {
		vt.t = C.collio_type_byte()
	}
	return lt, vt, nil
}

// out gives MPI_File_get_view's caller a type it owns: the predefined one,
// a new duplicate, or a type built from the recipe.
func (v viewType) out() (C.MPI_Datatype, error) {
	if v.recipe != nil {
		t, err := v.recipe.Build()
		return C.MPI_Datatype(t.Pointer()), err
	}
	var out C.MPI_Datatype
	if rc := C.collio_type_keep(v.t, &out); rc != C.MPI_SUCCESS {
		return nil, errCode(rc, "MPI_Type_dup of the view's type failed")
	}
	return out, nil
}

// drop releases what v holds.
func (v viewType) drop() {
	if v.recipe != nil {
		v.recipe.Free()
	} else if v.t != nil {
		C.collio_type_drop(v.t)
	}
}

//export collioGoGetView
func collioGoGetView(h C.uintptr_t, disp *C.longlong, etype, ftype *unsafe.Pointer, datarep *C.char) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	et, err := f.etype.out()
	if err != nil {
		return fail(f.ctx("get_view", err))
	}
	ft, err := f.ftype.out()
	if err != nil {
		C.collio_type_drop(et)
		return fail(f.ctx("get_view", err))
	}
	*disp = C.longlong(f.f.View().Disp)
	*etype, *ftype = unsafe.Pointer(et), unsafe.Pointer(ft)
	out := unsafe.Slice((*byte)(unsafe.Pointer(datarep)), C.MPI_MAX_DATAREP_STRING)
	out[copy(out[:len(out)-1], f.datarep)] = 0
	return C.MPI_SUCCESS
}

// collioGoHostInfo gives a file passed through to the host MPI-IO the
// config's hints for its path: *out is a new info object holding the
// program's hints and the config's (the caller frees it), or NULL when no
// rule with hints matches.
//
//export collioGoHostInfo
func collioGoHostInfo(path *C.char, info unsafe.Pointer, out *unsafe.Pointer) {
	*out = nil
	p := C.GoString(path)
	some := false
	for _, r := range loadConfig().matching(p) {
		some = some || len(r.Hints) > 0
	}
	if !some {
		return
	}
	m := openHints(p, infoMap(C.MPI_Info(info)))
	ni := C.collio_info_new()
	if ni == C.collio_info_null() {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ck, cv := C.CString(k), C.CString(m[k])
		C.collio_info_put(ni, ck, cv)
		C.free(unsafe.Pointer(ck))
		C.free(unsafe.Pointer(cv))
	}
	*out = unsafe.Pointer(ni)
}

//export collioGoSetInfo
func collioGoSetInfo(h C.uintptr_t, info unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	hs := filterHints(infoMap(C.MPI_Info(info)), f.comm.Rank())
	return fail(f.ctx("set_info", f.f.SetInfo(hs, true)))
}

//export collioGoGetInfo
func collioGoGetInfo(h C.uintptr_t, out *unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	info := C.collio_info_new()
	if info == C.collio_info_null() {
		return fail(f.ctx("get_info", errCode(C.MPI_ERR_INTERN, "MPI_Info_create failed")))
	}
	m := f.f.Info()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if m[k] == "" {
			continue
		}
		ck, cv := C.CString(k), C.CString(m[k])
		C.collio_info_put(info, ck, cv)
		C.free(unsafe.Pointer(ck))
		C.free(unsafe.Pointer(cv))
	}
	*out = unsafe.Pointer(info)
	return C.MPI_SUCCESS
}

//export collioGoSize
func collioGoSize(h C.uintptr_t, size *C.longlong) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	n, err := f.f.Size()
	*size = C.longlong(n)
	return fail(f.ctx("get_size", err))
}

//export collioGoSetSize
func collioGoSetSize(h C.uintptr_t, size C.longlong, prealloc C.int) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	if prealloc != 0 {
		return fail(f.ctx("preallocate", f.f.Preallocate(int64(size))))
	}
	return fail(f.ctx("set_size", f.f.SetSize(int64(size))))
}

//export collioGoSync
func collioGoSync(h C.uintptr_t) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	return fail(f.ctx("sync", f.f.Sync()))
}

// whence converts MPI_SEEK_* to io.Seek*.
func whence(w C.int) (int, error) {
	switch w {
	case C.MPI_SEEK_SET:
		return io.SeekStart, nil
	case C.MPI_SEEK_CUR:
		return io.SeekCurrent, nil
	case C.MPI_SEEK_END:
		return io.SeekEnd, nil
	}
	return 0, errCode(C.MPI_ERR_ARG, "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", int(w))
}

//export collioGoSeek
func collioGoSeek(h C.uintptr_t, off C.longlong, w C.int, shared C.int) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	wh, werr := whence(w)
	if shared != 0 {
		return fail(f.ctx("seek_shared", f.seekShared(int64(off), wh, werr)))
	}
	if werr != nil {
		return fail(f.ctx("seek", werr))
	}
	_, err = f.f.Seek(int64(off), wh)
	return fail(f.ctx("seek", err))
}

//export collioGoPosition
func collioGoPosition(h C.uintptr_t, pos *C.longlong, shared C.int) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	if shared != 0 {
		p, err := f.f.PositionShared()
		*pos = C.longlong(p)
		return fail(f.ctx("get_position_shared", err))
	}
	*pos = C.longlong(f.f.Position())
	return C.MPI_SUCCESS
}

//export collioGoByteOffset
func collioGoByteOffset(h C.uintptr_t, off C.longlong, disp *C.longlong) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	b, err := f.f.ByteOffset(int64(off))
	*disp = C.longlong(b)
	return fail(f.ctx("get_byte_offset", err))
}

//export collioGoAtomicity
func collioGoAtomicity(h C.uintptr_t, set C.int, flag *C.int) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	if set != 0 {
		return fail(f.ctx("set_atomicity", f.f.SetAtomicity(*flag != 0)))
	}
	*flag = 0
	if f.f.Atomicity() {
		*flag = 1
	}
	return C.MPI_SUCCESS
}

//export collioGoComm
func collioGoComm(h C.uintptr_t, c *unsafe.Pointer) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	*c = f.comm.Pointer()
	return C.MPI_SUCCESS
}

//export collioGoAmode
func collioGoAmode(h C.uintptr_t, amode *C.int) C.int {
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	*amode = C.int(f.f.Mode())
	return C.MPI_SUCCESS
}

// monitor holds the candidates for the Go runtime's monitor thread, listed
// while the library initialises; it is moved to SCHED_BATCH
// (gocores.Monitor) then, when the runtime is busy initialising and the
// monitor awake, or else in MPI_Init (Quiet does nothing once it
// succeeded), never inside a timed call, unless COLLIO_QUIET_MONITOR=0.
var monitor = gocores.FindMonitor()

func init() { quietMonitor() }

func quietMonitor() {
	if envSwitch(envvar.QuietMonitor) {
		monitor.Quiet()
	}
}
