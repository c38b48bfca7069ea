package ufs

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/collio/collio/driver"
	"golang.org/x/sys/unix"
)

// Direct I/O (the direct_read and direct_write hints), the way ROMIO's
// Lustre driver does it (ADIOI_LUSTRE_Directio): the file gets a second
// descriptor opened with O_DIRECT, and each transfer is split in three.
//
//   - The whole aligned blocks in the middle go through the O_DIRECT
//     descriptor: straight from or into the caller's buffers when their
//     addresses and lengths are aligned too, else through an aligned
//     bounce buffer of up to bounceSize bytes at a time.
//   - Writes: the partial first and last blocks go through the ordinary
//     descriptor, that is the page cache, which merges bytes of a block
//     whatever their writer. There is no read-modify-write of those
//     blocks, so no lock is needed and concurrent ranks writing different
//     bytes of one block cannot lose each other's: the bytes other ranks
//     write there stay theirs. The write block is at least a page, so a
//     page that one rank writes through the cache is never written
//     directly by another rank (unless both write the same bytes, which
//     MPI leaves undefined outside atomic mode, whose locks order them).
//     The kernel writes back dirty cached pages in a direct transfer's
//     range before it and drops them after it.
//   - Reads: the partial first and last blocks are read whole through the
//     O_DIRECT descriptor into a bounce buffer and the wanted bytes copied
//     out (the kernel writes back dirty cached pages in the range first,
//     so what other ranks wrote through the cache is seen). A direct read
//     that comes back short (end of file) is finished through the ordinary
//     descriptor, which gives the exact end of file: ReadAt keeps its
//     count-and-io.EOF contract.
//
// Alignment comes from statx's STATX_DIOALIGN where the file system
// reports it (ext4, xfs: 512 bytes here), else defaultAlign. If the open
// with O_DIRECT fails (a file system without O_DIRECT support: EINVAL),
// the file is used without it and Direct reports why; adio warns once.
// If a direct transfer is refused later (EINVAL), that transfer and all
// later ones go through the page cache, and Direct reports it.

// defaultAlign is the alignment used when statx does not report one: the
// page size of common systems, a multiple of every logical block size in
// use (512, 4096), and ROMIO's fixed value (d_mem = d_miniosz = 4096).
const defaultAlign = 4096

// bounceSize bounds a bounce buffer; transfers through one are moved in
// pieces of at most this size.
const bounceSize = 4 << 20

// errRefused is Direct's reason once a direct transfer was refused.
var errRefused = errors.New("the file system refused an O_DIRECT transfer (EINVAL); the page cache is used from then on")

// direct is the O_DIRECT side of a file.
type direct struct {
	f           *os.File
	raw         syscall.RawConn
	read, write bool
	memAlign    int64 // buffer addresses
	offAlign    int64 // file offsets and lengths
	block       int64 // writes: the unit split between page cache and O_DIRECT
	refused     atomic.Bool
	moved       atomic.Int64 // bytes moved with O_DIRECT
	bounce      sync.Pool    // *[]byte, bounceLen bytes aligned to block
	bounceLen   int64
}

// openDirect opens the O_DIRECT descriptor; tests replace it to make the
// open fail as it does on file systems without O_DIRECT.
var openDirect = func(path string, flags int) (*os.File, error) { return os.OpenFile(path, flags, 0) }

// isTrue reads a boolean hint value.
func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// setupDirect opens the O_DIRECT descriptor when direct_read or
// direct_write asks for it. A failure is kept for Direct, not returned:
// the file works without O_DIRECT.
func (f *file) setupDirect(path string, opts driver.OpenOptions) {
	read, write := isTrue(opts.Params[driver.ParamDirectRead]), isTrue(opts.Params[driver.ParamDirectWrite])
	if !read && !write {
		return
	}
	// The ordinary open created or truncated the file already.
	flags := opts.Flags&^(os.O_CREATE|os.O_EXCL|os.O_TRUNC) | unix.O_DIRECT
	df, err := openDirect(path, flags)
	if err != nil {
		f.directErr = err
		return
	}
	raw, err := df.SyscallConn()
	if err != nil {
		df.Close()
		f.directErr = err
		return
	}
	d := &direct{f: df, raw: raw, read: read, write: write}
	raw.Control(func(fd uintptr) { d.memAlign, d.offAlign = dioAlign(int(fd)) })
	d.block = lcm(d.offAlign, int64(os.Getpagesize()))
	d.bounceLen = max(bounceSize/d.block, 1) * d.block
	f.dio = d
}

// dioAlign returns the memory and offset alignment of direct I/O on the
// descriptor's file: statx's STATX_DIOALIGN (Linux 6.1 and later, on file
// systems that report it), else defaultAlign for both.
func dioAlign(fd int) (mem, off int64) {
	var st unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st)
	if err == nil && st.Mask&unix.STATX_DIOALIGN != 0 && st.Dio_offset_align > 0 && st.Dio_mem_align > 0 {
		return int64(st.Dio_mem_align), int64(st.Dio_offset_align)
	}
	return defaultAlign, defaultAlign
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int64) int64 { return a / gcd(a, b) * b }

// Direct reports which directions use O_DIRECT (driver.DirectFile).
func (f *file) Direct() driver.DirectStatus {
	d := f.dio
	switch {
	case d == nil:
		return driver.DirectStatus{Err: f.directErr}
	case d.refused.Load():
		return driver.DirectStatus{Err: &os.PathError{Op: "O_DIRECT", Path: f.path, Err: errRefused}}
	}
	return driver.DirectStatus{Read: d.read, Write: d.write, MemAlign: d.memAlign, OffsetAlign: d.offAlign, Block: d.block, Bytes: d.moved.Load()}
}

// directOn reports whether transfers of this direction go through O_DIRECT.
func (f *file) directOn(write bool) bool {
	d := f.dio
	if d == nil || d.refused.Load() {
		return false
	}
	if write {
		return d.write
	}
	return d.read
}

func (f *file) closeDirect() error {
	if f.dio == nil {
		return nil
	}
	return f.dio.f.Close()
}

func alignDown(x, a int64) int64 { return x - x%a }
func alignUp(x, a int64) int64   { return alignDown(x+a-1, a) }

// totalLen is the bytes of bufs.
func totalLen(bufs [][]byte) int64 {
	n := int64(0)
	for _, b := range bufs {
		n += int64(len(b))
	}
	return n
}

// span returns bytes [from, to) of the concatenation of bufs as new slice
// headers; the caller's list is not touched.
func span(bufs [][]byte, from, to int64) [][]byte {
	var out [][]byte
	pos := int64(0)
	for _, b := range bufs {
		n := int64(len(b))
		if lo, hi := max(from-pos, 0), min(to-pos, n); lo < hi {
			out = append(out, b[lo:hi])
		}
		pos += n
		if pos >= to {
			break
		}
	}
	return out
}

// gather copies the concatenation of bufs into dst.
func gather(dst []byte, bufs [][]byte) {
	for _, b := range bufs {
		dst = dst[copy(dst, b):]
	}
}

// scatter copies src over the concatenation of bufs.
func scatter(bufs [][]byte, src []byte) {
	for _, b := range bufs {
		src = src[copy(b, src):]
	}
}

// aligned reports whether every buffer can be handed to O_DIRECT as it
// is: address aligned to memAlign, length to offAlign.
func (d *direct) aligned(bufs [][]byte) bool {
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if int64(uintptr(unsafe.Pointer(&b[0])))%d.memAlign != 0 || int64(len(b))%d.offAlign != 0 {
			return false
		}
	}
	return true
}

// getBounce returns an aligned buffer of bounceLen bytes.
func (d *direct) getBounce() *[]byte {
	if p, ok := d.bounce.Get().(*[]byte); ok {
		return p
	}
	align := max(d.block, d.memAlign)
	raw := make([]byte, d.bounceLen+align)
	skip := (align - int64(uintptr(unsafe.Pointer(&raw[0])))%align) % align
	b := raw[skip : skip+d.bounceLen : skip+d.bounceLen]
	return &b
}

func (d *direct) putBounce(p *[]byte) { d.bounce.Put(p) }

// moveDirect moves bufs at off through the O_DIRECT descriptor; off and
// every buffer must be aligned (aligned). What O_DIRECT does not move (a
// short transfer: end of file, a signal; or a refusal, EINVAL, after
// which the file stops using O_DIRECT) is moved through the ordinary
// descriptor, which gives reads their exact end of file (io.EOF).
func (f *file) moveDirect(op string, write bool, bufs [][]byte, off int64) (int, error) {
	d := f.dio
	pending := nonEmpty(bufs)
	done := 0
	var opErr error
	err := d.raw.Control(func(fd uintptr) {
		for len(pending) > 0 && !d.refused.Load() {
			batch := pending[:min(len(pending), iovMax)]
			want := int(totalLen(batch))
			var n int
			var err error
			if write {
				n, err = unix.Pwritev(int(fd), batch, off+int64(done))
			} else {
				n, err = unix.Preadv(int(fd), batch, off+int64(done))
			}
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EINVAL:
				d.refused.Store(true)
				return
			case err != nil:
				opErr = f.pathErr(op, err)
				return
			}
			done += n
			d.moved.Add(int64(n))
			pending = advance(pending, n)
			if n < want {
				return // the rest through the page cache
			}
		}
	})
	if err != nil {
		return done, &os.PathError{Op: op, Path: f.path, Err: os.ErrClosed}
	}
	if opErr != nil || len(pending) == 0 {
		return done, opErr
	}
	call, noProgress := f.pwritev, io.ErrShortWrite
	if !write {
		call, noProgress = f.preadv, io.EOF
	}
	n, err := f.vectored(op, pending, off+int64(done), call, noProgress)
	return done + n, err
}

// writeDirect writes bufs back to back at off: the whole blocks in the
// middle with O_DIRECT (through a bounce buffer unless the caller's
// buffers are aligned), the partial first and last blocks through the
// page cache.
func (f *file) writeDirect(op string, bufs [][]byte, off int64) (int, error) {
	if off < 0 {
		return 0, f.pathErr(op, unix.EINVAL)
	}
	d := f.dio
	size := totalLen(bufs)
	end := off + size
	lo := min(alignUp(off, d.block), end)
	hi := max(alignDown(end, d.block), lo)
	if lo == hi { // no whole block
		return f.vectored(op, bufs, off, f.pwritev, io.ErrShortWrite)
	}
	done := 0
	add := func(n int, err error) error { done += n; return err }
	if lo > off {
		if err := add(f.vectored(op, span(bufs, 0, lo-off), off, f.pwritev, io.ErrShortWrite)); err != nil {
			return done, err
		}
	}
	if err := add(f.writeBlocks(op, span(bufs, lo-off, hi-off), lo)); err != nil {
		return done, err
	}
	if end > hi {
		if err := add(f.vectored(op, span(bufs, hi-off, size), hi, f.pwritev, io.ErrShortWrite)); err != nil {
			return done, err
		}
	}
	return done, nil
}

// writeBlocks writes whole blocks at the aligned offset off with O_DIRECT.
func (f *file) writeBlocks(op string, bufs [][]byte, off int64) (int, error) {
	d := f.dio
	if d.aligned(bufs) {
		return f.moveDirect(op, true, bufs, off)
	}
	bp := d.getBounce()
	defer d.putBounce(bp)
	n := totalLen(bufs)
	done := 0
	for pos := int64(0); pos < n; {
		k := min(d.bounceLen, n-pos)
		chunk := (*bp)[:k]
		gather(chunk, span(bufs, pos, pos+k))
		m, err := f.moveDirect(op, true, [][]byte{chunk}, off+pos)
		done += m
		if err != nil {
			return done, err
		}
		pos += k
	}
	return done, nil
}

// readDirect fills bufs from off with O_DIRECT: the aligned middle
// straight into the caller's buffers when they are aligned, everything
// else through a bounce buffer. At end of file it returns the count read
// and io.EOF.
func (f *file) readDirect(op string, bufs [][]byte, off int64) (int, error) {
	if off < 0 {
		return 0, f.pathErr(op, unix.EINVAL)
	}
	d := f.dio
	size := totalLen(bufs)
	if size == 0 {
		return 0, nil
	}
	end := off + size
	lo := min(alignUp(off, d.offAlign), end)
	hi := max(alignDown(end, d.offAlign), lo)
	if lo == hi || !d.aligned(span(bufs, lo-off, hi-off)) {
		return f.readBounced(op, bufs, off, end)
	}
	done := 0
	add := func(n int, err error) error { done += n; return err }
	if lo > off {
		if err := add(f.readBounced(op, span(bufs, 0, lo-off), off, lo)); err != nil {
			return done, err
		}
	}
	if err := add(f.moveDirect(op, false, span(bufs, lo-off, hi-off), lo)); err != nil {
		return done, err
	}
	if end > hi {
		if err := add(f.readBounced(op, span(bufs, hi-off, size), hi, end)); err != nil {
			return done, err
		}
	}
	return done, nil
}

// readBounced fills bufs, which cover the file range [from, to), by
// reading the aligned blocks around it into a bounce buffer.
func (f *file) readBounced(op string, bufs [][]byte, from, to int64) (int, error) {
	d := f.dio
	bp := d.getBounce()
	defer d.putBounce(bp)
	done := 0
	for pos := from; pos < to; {
		ws := alignDown(pos, d.offAlign)
		we := min(ws+d.bounceLen, alignUp(to, d.offAlign))
		n, err := f.moveDirect(op, false, [][]byte{(*bp)[:we-ws]}, ws)
		if err != nil && !errors.Is(err, io.EOF) {
			return done, err
		}
		want := min(we, to)
		if got := min(ws+int64(n), want); got > pos {
			scatter(span(bufs, pos-from, got-from), (*bp)[pos-ws:got-ws])
			done += int(got - pos)
			pos = got
		}
		if pos < want {
			return done, io.EOF
		}
	}
	return done, nil
}
