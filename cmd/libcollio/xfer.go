package main

// #include "shim.h"
import "C"

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"unsafe"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/internal/ioerr"
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
	*nbytes = C.longlong(f.split.n)
	return C.MPI_SUCCESS
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
	rc := C.collio_shfp_create(C.MPI_Comm(f.comm.Pointer()), C.longlong(f.f.Position()), &f.win)
	err := agreeLocal(f.comm, mpiErr(rc, "creating the shared file pointer window"))
	if err != nil {
		if rc == C.MPI_SUCCESS {
			// Other ranks could not make theirs; freeing is collective,
			// so the window is left.
			f.hasWin = false
		}
		warnOnce(f.comm.Rank(), "shared file pointers are unavailable: "+err.Error())
		return nil
	}
	f.hasWin = true
	return nil
}

func (f *file) closeSharedPointer() error {
	if !f.hasWin {
		return nil
	}
	f.hasWin = false
	return mpiErr(C.collio_shfp_free(&f.win), "freeing the shared file pointer window")
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
