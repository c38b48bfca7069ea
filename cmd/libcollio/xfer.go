package main

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"unsafe"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/envvar"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/layout"
)

// makeAccess describes count instances of the MPI datatype dt at buf as an
// adio.Access. The byte slice covers exactly the memory the instances
// touch; a type whose data starts before or after buf (negative true lower
// bound, or absolute addresses with MPI_BOTTOM) is shifted so the slice
// starts at its first byte.
func makeAccess(buf unsafe.Pointer, count int64, dt unsafe.Pointer) (adio.Access, error) {
	if count < 0 {
		return adio.Access{}, errCode(C.MPI_ERR_COUNT, "count %d is negative", count)
	}
	t, err := decodeType(dt, "datatype")
	if err != nil {
		return adio.Access{}, err
	}
	if count == 0 || t.Size() == 0 {
		return adio.Access{Count: count, MemType: t}, nil
	}
	ext := t.Extent()
	if ext < 0 {
		return adio.Access{}, errCode(C.MPI_ERR_TYPE, "datatype %s has a negative extent", t)
	}
	lb := t.TrueLB()
	span := (count-1)*ext + t.TrueExtent()
	if t.TrueExtent() <= 0 || (ext > 0 && count-1 > (maxSpan-t.TrueExtent())/ext) {
		return adio.Access{}, errCode(C.MPI_ERR_COUNT, "%d instances of datatype %s do not fit in memory", count, t)
	}
	// (Compared as a number: the compiler may assume that the result of
	// pointer arithmetic is never nil.)
	if uintptr(buf)+uintptr(lb) == 0 {
		return adio.Access{}, errCode(C.MPI_ERR_BUFFER, "buffer is NULL but %d bytes are to be transferred", count*t.Size())
	}
	start := unsafe.Add(buf, lb)
	if lb != 0 {
		if t, err = layout.Struct([]int{1}, []int64{-lb}, []*layout.Type{t}); err != nil {
			return adio.Access{}, errCode(C.MPI_ERR_TYPE, "datatype: %v", err)
		}
	}
	return adio.Access{Buf: unsafe.Slice((*byte)(start), span), Count: count, MemType: t}, nil
}

// maxSpan bounds the memory one access may cover (2^60 bytes).
const maxSpan = 1 << 60

//export collioGoXfer
func collioGoXfer(h C.uintptr_t, op C.int, off C.longlong, buf unsafe.Pointer, count C.int, dt unsafe.Pointer, nbytes *C.longlong) C.int {
	*nbytes = 0
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	n, err := f.xfer(int(op), int64(off), buf, int64(count), dt)
	*nbytes = C.longlong(n)
	return fail(f.ctxOp(int(op), err))
}

// ctxOp is ctx for transfer op, named only on error: building the name
// allocates, and transfers from C are the hot path.
func (f *file) ctxOp(op int, err error) error {
	if err == nil {
		return nil
	}
	return f.ctx(opName(op), err)
}

// opName names a transfer as collio's errors do: "write_at_all",
// "read_shared", "write_all_begin", ...
func opName(op int) string {
	name := "write"
	if op&C.COLLIO_XREAD != 0 {
		name = "read"
	}
	switch op & C.COLLIO_XKIND {
	case C.COLLIO_XAT:
		name += "_at"
	case C.COLLIO_XAT_ALL:
		name += "_at_all"
	case C.COLLIO_XALL:
		name += "_all"
	case C.COLLIO_XSHARED:
		name += "_shared"
	case C.COLLIO_XORDERED:
		name += "_ordered"
	}
	if op&C.COLLIO_XSPLIT != 0 {
		name += "_begin"
	}
	return name
}

func (f *file) xfer(op int, off int64, buf unsafe.Pointer, count int64, dt unsafe.Pointer) (int64, error) {
	kind := op & C.COLLIO_XKIND
	read := op&C.COLLIO_XREAD != 0
	split := op&C.COLLIO_XSPLIT != 0
	collective := kind == C.COLLIO_XAT_ALL || kind == C.COLLIO_XALL || kind == C.COLLIO_XORDERED

	acc, local := makeAccess(buf, count, dt)
	if local == nil && f.f.Mode()&adio.ModeSequential != 0 && kind != C.COLLIO_XSHARED && kind != C.COLLIO_XORDERED {
		local = errCode(C.MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL: only shared file pointer operations are allowed")
	}
	if local == nil && split && f.split.active {
		local = errCode(C.MPI_ERR_OTHER, "a split collective is already in progress on this file")
	}
	local = f.ctxOp(op, local)
	if local != nil && !collective {
		return 0, local
	}
	if local != nil {
		// The other ranks are entering the collective call: join it with
		// this rank's error, so that every rank fails together with it.
		acc = adio.Access{Err: local}
	}
	if split && kind != C.COLLIO_XORDERED {
		// A split collective's _begin starts a nonblocking transfer; its
		// _end waits for it.
		x, err := f.istartAccess(op, off, acc, local)
		if err != nil {
			return 0, err
		}
		if local != nil {
			x.r.Release()
			return 0, local
		}
		f.split.active, f.split.op, f.split.x = true, op&^C.COLLIO_XSPLIT, x
		return 0, nil
	}

	o := int64(-1)
	switch kind {
	case C.COLLIO_XAT, C.COLLIO_XAT_ALL:
		o = off
	case C.COLLIO_XIND, C.COLLIO_XALL:
		o = f.f.Position()
	}
	cs := f.stats.begin(f, o, collective)
	f.xoff = -1
	var n int64
	var err error
	switch kind {
	case C.COLLIO_XAT:
		n, err = pick(read, f.f.ReadAt, f.f.WriteAt)(acc, off)
	case C.COLLIO_XAT_ALL:
		n, err = pick(read, f.f.ReadAtAll, f.f.WriteAtAll)(acc, off)
	case C.COLLIO_XIND:
		if read {
			n, err = f.f.Read(acc)
		} else {
			n, err = f.f.Write(acc)
		}
	case C.COLLIO_XALL:
		if read {
			n, err = f.f.ReadAll(acc)
		} else {
			n, err = f.f.WriteAll(acc)
		}
	case C.COLLIO_XSHARED:
		n, err = f.shared(acc, read)
	case C.COLLIO_XORDERED:
		n, err = f.ordered(acc, read)
	default:
		err = errCode(C.MPI_ERR_INTERN, "unknown transfer kind %d", kind)
	}
	f.stats.end(f, cs, collective, read, f.xoff, acc.Size(), n, errors.Join(local, err))
	if local != nil {
		return 0, local
	}
	switch {
	case err != nil || split:
	case kind == C.COLLIO_XAT_ALL && read:
		f.armLane(C.COLLIO_LANE_READ_ALL, dt, acc.MemType)
	case kind == C.COLLIO_XAT_ALL:
		f.armLane(C.COLLIO_LANE_WRITE_ALL, dt, acc.MemType)
	case kind == C.COLLIO_XAT && read:
		f.armLane(C.COLLIO_LANE_READ, dt, acc.MemType)
	}
	if err == nil && split {
		f.split.active, f.split.op, f.split.n = true, op&^C.COLLIO_XSPLIT, n
	}
	return n, err
}

func pick(read bool, r, w func(adio.Access, int64) (int64, error)) func(adio.Access, int64) (int64, error) {
	if read {
		return r
	}
	return w
}

//export collioGoSplitEnd
func collioGoSplitEnd(h C.uintptr_t, op C.int, nbytes *C.longlong) C.int {
	*nbytes = 0
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	name := strings.TrimSuffix(opName(int(op)|C.COLLIO_XSPLIT), "_begin") + "_end"
	if !f.split.active {
		return fail(f.ctx(name, errCode(C.MPI_ERR_OTHER, "no split collective is in progress on this file")))
	}
	if f.split.op != int(op) {
		return fail(f.ctx(name, errCode(C.MPI_ERR_OTHER, "this _end does not match the _begin (%s) of the split collective in progress",
			opName(f.split.op|C.COLLIO_XSPLIT))))
	}
	f.split.active = false
	var n int64
	var ferr error
	if x := f.split.x; x != nil {
		f.split.x = nil
		n, ferr = x.finish()
	} else {
		n = f.split.n
	}
	*nbytes = C.longlong(n)
	return fail(f.ctx(name, ferr))
}

// asyncXfer is a nonblocking collective transfer started from C: an
// MPI_File_i*_all call (behind a generalized request) or a split
// collective's _begin.
type asyncXfer struct {
	f     *file
	r     *adio.Request
	op    int
	cs    callStart
	size  int64
	local error
	// ready is closed once the generalized request is complete too
	// (collio_greq_ready returned), so that a PMPI_Wait after it returns
	// at once.
	ready chan struct{}
}

// istart starts a nonblocking collective transfer with xfer's checks. A
// check that fails on this rank still starts the transfer, carrying the
// error, so that the others fail with it at their wait.
func (f *file) istart(op int, off int64, buf unsafe.Pointer, count int64, dt unsafe.Pointer) (*asyncXfer, error) {
	acc, local := makeAccess(buf, count, dt)
	if local == nil && f.f.Mode()&adio.ModeSequential != 0 {
		local = errCode(C.MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL: only shared file pointer operations are allowed")
	}
	local = f.ctxOp(op, local)
	if local != nil {
		acc = adio.Access{Err: local}
	}
	return f.istartAccess(op, off, acc, local)
}

func (f *file) istartAccess(op int, off int64, acc adio.Access, local error) (*asyncXfer, error) {
	read := op&C.COLLIO_XREAD != 0
	x := &asyncXfer{f: f, op: op, size: acc.Size(), local: local, ready: make(chan struct{})}
	if f.stats != nil {
		o := off
		if op&C.COLLIO_XKIND == C.COLLIO_XALL {
			o = f.f.Position()
		}
		x.cs, f.xoff = f.stats.begin(f, o, true), -1
	}
	var err error
	switch {
	case op&C.COLLIO_XKIND == C.COLLIO_XAT_ALL && read:
		x.r, err = f.f.IReadAtAll(acc, off)
	case op&C.COLLIO_XKIND == C.COLLIO_XAT_ALL:
		x.r, err = f.f.IWriteAtAll(acc, off)
	case read:
		x.r, err = f.f.IReadAll(acc)
	default:
		x.r, err = f.f.IWriteAll(acc)
	}
	if err != nil {
		if f.stats != nil {
			f.stats.end(f, x.cs, true, read, f.xoff, x.size, 0, errors.Join(local, err))
		}
		return nil, err
	}
	return x, nil
}

// finish waits for the transfer and records it, on the caller's thread.
func (x *asyncXfer) finish() (int64, error) {
	n, err := x.r.Wait()
	f := x.f
	if f.stats != nil {
		f.stats.end(f, x.cs, true, x.op&C.COLLIO_XREAD != 0, f.xoff, x.size, n, errors.Join(x.local, err))
	}
	if x.local != nil {
		return 0, x.local
	}
	return n, err
}

// collioGoIStart starts a nonblocking collective transfer for requests.c's
// generalized request g: *token names it for collioGoIFinish and
// collioGoIRelease. When the transfer completes, collio_greq_ready(g)
// completes the request: from a goroutine, or at once when the transfer
// ran in the start call (below MPI_THREAD_MULTIPLE).
//
//export collioGoIStart
func collioGoIStart(h C.uintptr_t, op C.int, off C.longlong, buf unsafe.Pointer, count C.int, dt unsafe.Pointer, g unsafe.Pointer, token *C.uintptr_t) C.int {
	*token = 0
	f, err := lookup(h)
	if err != nil {
		return fail(err)
	}
	x, err := f.istart(int(op), int64(off), buf, int64(count), dt)
	if err != nil {
		return fail(f.ctxOp(int(op), err))
	}
	if x.local != nil {
		// This rank's own mistake: it fails here; the transfer goes on
		// for the others' sake and nobody waits for it.
		x.r.Release()
		return fail(x.local)
	}
	*token = C.uintptr_t(cgo.NewHandle(x))
	select {
	case <-x.r.Done():
		C.collio_greq_ready(g)
		close(x.ready)
	default:
		go func() {
			<-x.r.Done()
			C.collio_greq_ready(g)
			close(x.ready)
		}()
	}
	return C.MPI_SUCCESS
}

// collioGoIFinish hands over a completed transfer (requests.c's query
// function, on the thread that waits): its byte count and error.
//
//export collioGoIFinish
func collioGoIFinish(token C.uintptr_t, nbytes *C.longlong) C.int {
	x := cgo.Handle(token).Value().(*asyncXfer)
	n, err := x.finish()
	*nbytes = C.longlong(n)
	return fail(x.f.ctxOp(x.op, err))
}

// collioGoIWait blocks the calling thread until the transfer and its
// generalized request are complete, without spinning: MPI_Wait on collio's
// request then returns at once, and the cores stay with the threads that
// move the data. (Waiting for the transfer alone let PMPI_Wait poll the
// progress engine until the goroutine marked the request complete, on
// the core that goroutine needed.)
//
//export collioGoIWait
func collioGoIWait(token C.uintptr_t) {
	<-cgo.Handle(token).Value().(*asyncXfer).ready
}

// collioGoIRelease forgets a token (the request was freed).
//
//export collioGoIRelease
func collioGoIRelease(token C.uintptr_t) {
	h := cgo.Handle(token)
	if x, ok := h.Value().(*asyncXfer); ok {
		x.r.Release()
	}
	h.Delete()
}

// The shared file pointer is adio's (adio/shared.go), the same as the Go
// API's. COLLIO_SHARED_FP=0 skips it (one MPI_Win_allocate at the first
// open on a communicator); shared-pointer calls then fail with
// MPI_ERR_UNSUPPORTED_OPERATION.
func sharedPointerOff() bool {
	return !envSwitch(envvar.SharedFP)
}

// collioGoWarm runs in collio's MPI_Init, on every rank: it prepares for
// the first open on MPI_COMM_WORLD what that open would otherwise make
// (adio.Warm: a private duplicate, its node layout and its shared file
// pointer), when MPI starts rather than inside a timed open.
// COLLIO_WARM=0 skips it. It also quiets the runtime's monitor
// (quietMonitor) if the library's initialisation could not.
//
//export collioGoWarm
func collioGoWarm() {
	quietMonitor()
	checkEnvAtInit()
	if !envSwitch(envvar.Warm) {
		return
	}
	err := adio.Warm(mpi.World(), sharedPointerOff(), nil)
	if err != nil && verbose() > 0 {
		fmt.Fprintf(os.Stderr, "collio[%d]: preparing for the first open at MPI_Init: %v\n", worldRank(), err)
	}
}

func (f *file) shared(acc adio.Access, read bool) (int64, error) {
	var off, n int64
	var err error
	if read {
		off, n, err = f.f.ReadShared(acc)
	} else {
		off, n, err = f.f.WriteShared(acc)
	}
	if err == nil {
		f.xoff = off
	}
	return n, err
}

// ordered joins the collective with this rank's local error in acc.Err.
func (f *file) ordered(acc adio.Access, read bool) (int64, error) {
	var off, n int64
	var err error
	if read {
		off, n, err = f.f.ReadOrdered(acc)
	} else {
		off, n, err = f.f.WriteOrdered(acc)
	}
	if err == nil {
		f.xoff = off
	}
	return n, err
}

// seekShared is MPI_File_seek_shared: local is this rank's error with the
// arguments (a bad whence), agreed on in the call's own first step.
func (f *file) seekShared(off int64, wh int, local error) error {
	_, err := f.f.SeekSharedChecked(local, off, wh)
	return err
}
