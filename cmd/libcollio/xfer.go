package main

// #include "shim.h"
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/cgo"
	"strings"
	"unsafe"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
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
	return fail(f.ctx(opName(int(op)), err))
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
	local = f.ctx(opName(op), local)
	if local != nil && !collective {
		return 0, local
	}
	if local != nil && kind != C.COLLIO_XORDERED {
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
	cs := f.stats.begin(f, o)
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
		n, err = f.ordered(acc, read, local)
	default:
		err = errCode(C.MPI_ERR_INTERN, "unknown transfer kind %d", kind)
	}
	f.stats.end(f, cs, collective, read, f.xoff, acc.Size(), n, errors.Join(local, err))
	if local != nil {
		return 0, local
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
}

// istart starts a nonblocking collective transfer with xfer's checks. A
// check that fails on this rank still starts the transfer, carrying the
// error, so that the others fail with it at their wait.
func (f *file) istart(op int, off int64, buf unsafe.Pointer, count int64, dt unsafe.Pointer) (*asyncXfer, error) {
	acc, local := makeAccess(buf, count, dt)
	if local == nil && f.f.Mode()&adio.ModeSequential != 0 {
		local = errCode(C.MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened with MPI_MODE_SEQUENTIAL: only shared file pointer operations are allowed")
	}
	local = f.ctx(opName(op), local)
	if local != nil {
		acc = adio.Access{Err: local}
	}
	return f.istartAccess(op, off, acc, local)
}

func (f *file) istartAccess(op int, off int64, acc adio.Access, local error) (*asyncXfer, error) {
	read := op&C.COLLIO_XREAD != 0
	x := &asyncXfer{f: f, op: op, size: acc.Size(), local: local}
	if f.stats != nil {
		o := off
		if op&C.COLLIO_XKIND == C.COLLIO_XALL {
			o = f.f.Position()
		}
		x.cs, f.xoff = f.stats.begin(f, o), -1
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

// collioGoIStart starts a nonblocking collective transfer for shim.c's
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
		return fail(f.ctx(opName(int(op)), err))
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
	default:
		go func() {
			<-x.r.Done()
			C.collio_greq_ready(g)
		}()
	}
	return C.MPI_SUCCESS
}

// collioGoIFinish hands over a completed transfer (shim.c's query
// function, on the thread that waits): its byte count and error.
//
//export collioGoIFinish
func collioGoIFinish(token C.uintptr_t, nbytes *C.longlong) C.int {
	x := cgo.Handle(token).Value().(*asyncXfer)
	n, err := x.finish()
	*nbytes = C.longlong(n)
	return fail(x.f.ctx(opName(x.op), err))
}

// collioGoIWait blocks the calling thread until the transfer completes,
// without spinning: MPI_Wait on collio's request then returns at once,
// and the cores stay with the threads that move the data.
//
//export collioGoIWait
func collioGoIWait(token C.uintptr_t) {
	<-cgo.Handle(token).Value().(*asyncXfer).r.Done()
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

// The shared file pointer. Rank 0 of the file's communicator holds it (in
// etypes of the view) in an MPI window; write_shared and read_shared take
// their offset with one atomic MPI_Fetch_and_op (MPI_SUM) under a shared
// passive-target lock, then do an independent WriteAt/ReadAt there. The
// ordered calls gather every rank's size, rank 0 advances the pointer by
// the total in one Fetch_and_op and broadcasts the old value, and each rank
// does a collective WriteAtAll/ReadAtAll at old value + the sizes of the
// ranks before it. Reads advance the pointer by the size asked for, as
// ROMIO does. COLLIO_SHARED_FP=0 skips the window (one MPI_Win_allocate per
// open); shared-pointer calls then fail with MPI_ERR_UNSUPPORTED_OPERATION.

func (f *file) openSharedPointer() error {
	if v := getenv("COLLIO_SHARED_FP"); v == "0" || v == "off" {
		return nil
	}
	// The window is kept with the file's private communicator (adio.File.Keep)
	// and used again by the next open on the same application communicator:
	// making one is most of an open's cost. The last close left it at 0.
	if w, ok := f.f.Kept(shfpKey{}).(*shfpWindow); ok {
		f.win, f.hasWin = w.win, true
		if f.f.Position() == 0 { // every rank's: append mode is agreed at open
			return nil
		}
		var rc C.int
		if f.comm.Rank() == 0 {
			rc = C.collio_shfp_set(f.win, C.longlong(f.f.Position()))
		}
		return agreeLocal(f.comm, mpiErr(rc, "setting the shared file pointer"))
	}
	rc := C.collio_shfp_create(C.MPI_Comm(f.comm.Pointer()), C.longlong(f.f.Position()), &f.win)
	err := agreeLocal(f.comm, mpiErr(rc, "creating the shared file pointer window"))
	if err != nil {
		// Windows that were made are left: freeing is collective, and some
		// ranks have none.
		warnOnce(f.comm.Rank(), "shared file pointers are unavailable: "+err.Error())
		return nil
	}
	f.hasWin = true
	f.f.Keep(shfpKey{}, &shfpWindow{win: f.win})
	return nil
}

// closeSharedPointer leaves the window at 0 for the next open that reuses
// it; the close's agreement, which follows, orders this before that open.
func (f *file) closeSharedPointer() error {
	if !f.hasWin {
		return nil
	}
	f.hasWin = false
	if f.comm.Rank() != 0 {
		return nil
	}
	return mpiErr(C.collio_shfp_set(f.win, 0), "resetting the shared file pointer")
}

// collioGoWarm runs in collio's MPI_Init, on every rank: it prepares for
// the first open on MPI_COMM_WORLD what that open would otherwise make
// (adio.Warm: a private duplicate, its node layout, and here the shared
// file pointer window), when MPI starts rather than inside a timed open.
// COLLIO_WARM=0 skips it.
//
//export collioGoWarm
func collioGoWarm() {
	if v := getenv("COLLIO_WARM"); v == "0" || v == "off" {
		return
	}
	window := true
	if v := getenv("COLLIO_SHARED_FP"); v == "0" || v == "off" {
		window = false
	}
	err := adio.Warm(mpi.World(), func(dc comm.Comm, keep func(any, adio.Releaser)) error {
		mc, ok := dc.(mpi.Comm)
		if !window || !ok {
			return nil
		}
		var w C.MPI_Win
		if rc := C.collio_shfp_create(C.MPI_Comm(mc.Pointer()), 0, &w); rc != C.MPI_SUCCESS {
			return mpiErr(rc, "creating the shared file pointer window")
		}
		keep(shfpKey{}, &shfpWindow{win: w})
		return nil
	})
	if err != nil && verbose() > 0 {
		fmt.Fprintf(os.Stderr, "collio[%d]: preparing for the first open at MPI_Init: %v\n", worldRank(), err)
	}
}

// shfpKey keeps the shared file pointer window with a private communicator.
type shfpKey struct{}

type shfpWindow struct{ win C.MPI_Win }

// Release frees the window when its communicator goes (collective).
func (w *shfpWindow) Release() error {
	return mpiErr(C.collio_shfp_free(&w.win), "freeing the shared file pointer window")
}

// resetSharedPointer sets the shared pointer to 0 (collective).
func (f *file) resetSharedPointer() error {
	if !f.hasWin {
		return nil
	}
	var rc C.int
	if f.comm.Rank() == 0 {
		rc = C.collio_shfp_set(f.win, 0)
	}
	return agreeLocal(f.comm, mpiErr(rc, "resetting the shared file pointer"))
}

func (f *file) errNoSharedPointer() error {
	return errCode(C.MPI_ERR_UNSUPPORTED_OPERATION, "shared file pointers are unavailable for this file (COLLIO_SHARED_FP=0, or the window could not be created)")
}

// etypes converts an access size to etypes of the current view.
func (f *file) etypes(acc adio.Access) (int64, error) {
	et := f.f.View().Etype.Size()
	if acc.Size()%et != 0 {
		return 0, ioerr.New(ioerr.ErrArg, "", "transfer of %d bytes is not a whole number of etypes (etype size %d)", acc.Size(), et)
	}
	return acc.Size() / et, nil
}

func (f *file) shared(acc adio.Access, read bool) (int64, error) {
	if !f.hasWin {
		return 0, f.errNoSharedPointer()
	}
	k, err := f.etypes(acc)
	if err != nil {
		return 0, err
	}
	var old C.longlong
	if err := mpiErr(C.collio_shfp_fetch_add(f.win, C.longlong(k), &old), "advancing the shared file pointer"); err != nil {
		return 0, err
	}
	f.xoff = int64(old)
	return pick(read, f.f.ReadAt, f.f.WriteAt)(acc, int64(old))
}

func (f *file) ordered(acc adio.Access, read bool, local error) (int64, error) {
	var k int64
	if local == nil && !f.hasWin {
		local = f.errNoSharedPointer()
	}
	if local == nil {
		k, local = f.etypes(acc)
	}
	if err := agreeLocal(f.comm, local); err != nil {
		return 0, err
	}
	c := f.comm
	var mine [8]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(k))
	all := make([]byte, 8*c.Size())
	if err := c.Allgather(mine[:], all); err != nil {
		return 0, ioerr.Wrap(err, "ordered", f.path, c.Rank())
	}
	var before, total int64
	for r := 0; r < c.Size(); r++ {
		v := int64(binary.LittleEndian.Uint64(all[8*r:]))
		if r < c.Rank() {
			before += v
		}
		total += v
	}
	var msg [16]byte
	if c.Rank() == 0 {
		var old C.longlong
		rc := C.collio_shfp_fetch_add(f.win, C.longlong(total), &old)
		binary.LittleEndian.PutUint64(msg[:], uint64(old))
		binary.LittleEndian.PutUint64(msg[8:], uint64(int64(rc)))
	}
	if err := c.Bcast(msg[:], 0); err != nil {
		return 0, ioerr.Wrap(err, "ordered", f.path, c.Rank())
	}
	if rc := C.int(int64(binary.LittleEndian.Uint64(msg[8:]))); rc != C.MPI_SUCCESS {
		return 0, mpiErr(rc, "advancing the shared file pointer")
	}
	base := int64(binary.LittleEndian.Uint64(msg[:]))
	f.xoff = base + before
	return pick(read, f.f.ReadAtAll, f.f.WriteAtAll)(acc, base+before)
}

// seekShared is MPI_File_seek_shared (collective; every rank passes the
// same offset and whence). Rank 0 computes and stores the new position and
// broadcasts the outcome.
func (f *file) seekShared(off int64, wh int, local error) error {
	if local == nil && !f.hasWin {
		local = f.errNoSharedPointer()
	}
	c := f.comm
	if err := agreeLocal(c, local); err != nil {
		return err
	}
	same, err := sameOnAll(c, off, int64(wh))
	if err != nil {
		return ioerr.Wrap(err, "seek_shared", f.path, c.Rank())
	}
	if !same {
		return errNotSame("seek_shared", "offsets or whence values")
	}
	var msg [8]byte
	var rootErr error
	if c.Rank() == 0 {
		rootErr = f.seekSharedRoot(off, wh)
		binary.LittleEndian.PutUint64(msg[:], uint64(int64(classOf(rootErr))))
	}
	if err := c.Bcast(msg[:], 0); err != nil {
		return ioerr.Wrap(err, "seek_shared", f.path, c.Rank())
	}
	if rc := C.int(int64(binary.LittleEndian.Uint64(msg[:]))); rc != C.MPI_SUCCESS {
		if c.Rank() == 0 {
			return rootErr
		}
		return errCode(rc, "failed on rank 0 (see rank 0's error)")
	}
	return nil
}

func (f *file) seekSharedRoot(off int64, wh int) error {
	var base int64
	switch wh {
	case io.SeekCurrent:
		var cur C.longlong
		if err := mpiErr(C.collio_shfp_fetch_add(f.win, 0, &cur), "reading the shared file pointer"); err != nil {
			return err
		}
		base = int64(cur)
	case io.SeekEnd:
		end, err := f.f.EndPosition()
		if err != nil {
			return err
		}
		base = end
	}
	if base+off < 0 {
		return errCode(C.MPI_ERR_ARG, "resulting offset %d is negative", base+off)
	}
	return mpiErr(C.collio_shfp_set(f.win, C.longlong(base+off)), "setting the shared file pointer")
}

// currentDisplacement is the displacement MPI_DISPLACEMENT_CURRENT stands
// for in set_view: the byte offset of the shared file pointer in the view
// being replaced (MPI-3.1 13.3). Collective; called after the ranks agreed
// on set_view's arguments, so every rank's earlier shared-pointer calls are
// done. Rank 0 reads the pointer and broadcasts the result.
func (f *file) currentDisplacement() (int64, error) {
	if !f.hasWin {
		return 0, f.errNoSharedPointer()
	}
	c := f.comm
	var msg [16]byte
	var rootErr error
	if c.Rank() == 0 {
		var disp int64
		pos, err := f.sharedPosition()
		if err == nil {
			disp, err = f.f.ByteOffset(pos)
		}
		rootErr = err
		binary.LittleEndian.PutUint64(msg[:], uint64(disp))
		binary.LittleEndian.PutUint64(msg[8:], uint64(int64(classOf(err))))
	}
	if err := c.Bcast(msg[:], 0); err != nil {
		return 0, ioerr.Wrap(err, "set_view", f.path, c.Rank())
	}
	if rc := C.int(int64(binary.LittleEndian.Uint64(msg[8:]))); rc != C.MPI_SUCCESS {
		if c.Rank() == 0 {
			return 0, rootErr
		}
		return 0, errCode(rc, "reading the shared file pointer failed on rank 0 (see rank 0's error)")
	}
	return int64(binary.LittleEndian.Uint64(msg[:])), nil
}

func (f *file) sharedPosition() (int64, error) {
	if !f.hasWin {
		return 0, f.errNoSharedPointer()
	}
	var cur C.longlong
	err := mpiErr(C.collio_shfp_fetch_add(f.win, 0, &cur), "reading the shared file pointer")
	return int64(cur), err
}

// mpiErr turns an MPI return code into an error (nil for MPI_SUCCESS).
func mpiErr(rc C.int, what string) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var class C.int
	if C.MPI_Error_class(rc, &class) != C.MPI_SUCCESS {
		class = rc
	}
	return errCode(class, "%s failed (MPI error %d)", what, int(rc))
}
