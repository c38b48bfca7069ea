// Package collio is MPI-IO middleware: collective file I/O for MPI
// programs, configured with MPI-IO hints. A file is opened by all ranks of
// a communicator; each rank sees the file through a view (a displacement,
// an etype and a filetype) and reads or writes its part, independently or
// collectively.
//
//	c, _ := collio.World()
//	f, err := collio.Open(c, "/scratch/out.dat", collio.ModeCreate|collio.ModeWrOnly, collio.Hints{"cb_buffer_size": "8m"})
//	sub, _ := collio.Subarray(sizes, subsizes, starts, collio.OrderC, collio.Float64)
//	err = f.SetView(0, collio.Float64, sub, nil)
//	_, err = f.WriteAtAll(data, 0)
//	err = f.Close()
//
// Errors wrap the classes ErrNoSpace, ErrAccess, ... (errors.Is works);
// collective calls return the same error on every rank.
package collio

import (
	"io"

	"github.com/collio/collio/adio"
	"github.com/collio/collio/cache"
	_ "github.com/collio/collio/driver/beegfs" // beegfs: stripe info and layout through BeeGFS ioctls
	_ "github.com/collio/collio/driver/faulty" // faulty: fault injection
	_ "github.com/collio/collio/driver/lustre" // lustre: striping through LL_IOC_LOV_*STRIPE
	_ "github.com/collio/collio/driver/sim"    // sim: emulated striped file system
	_ "github.com/collio/collio/driver/ufs"    // the default driver
	_ "github.com/collio/collio/independent"   // independent: each rank's own I/O, data sieving
	"github.com/collio/collio/metrics"
	_ "github.com/collio/collio/segment"  // dynamic, static: OMPIO's segmentations
	_ "github.com/collio/collio/tam"      // tam: two-layer aggregation
	_ "github.com/collio/collio/twophase" // twophase: ROMIO's two-phase, affinity domains
)

// Mode is an access mode, a combination of the Mode* constants (values as
// Open MPI's MPI_MODE_*).
type Mode = adio.Mode

// Access modes.
const (
	ModeRdOnly        = adio.ModeRdOnly
	ModeWrOnly        = adio.ModeWrOnly
	ModeRdWr          = adio.ModeRdWr
	ModeCreate        = adio.ModeCreate
	ModeExcl          = adio.ModeExcl
	ModeDeleteOnClose = adio.ModeDeleteOnClose
	ModeUniqueOpen    = adio.ModeUniqueOpen
	ModeAppend        = adio.ModeAppend
	ModeSequential    = adio.ModeSequential
)

// Hints are MPI-IO hints (MPI_Info key/value pairs), ROMIO's, E10's and
// collio's; see docs/hints.md. nil means none.
type Hints map[string]string

// File is a file opened collectively. Methods whose names end in All are
// collective: every rank of the communicator calls them, and all return the
// same error. Offsets count etypes of the current view (bytes by default).
type File struct {
	f *adio.File
}

// Open opens path on every rank of c (collective). The path may start with
// a driver prefix such as "ufs:"; otherwise the file system is detected.
func Open(c Comm, path string, mode Mode, hints Hints) (*File, error) {
	f, err := adio.Open(c, path, mode, adio.OpenOptions{Hints: hints})
	if err != nil {
		return nil, err
	}
	return &File{f: f}, nil
}

// Delete deletes a file (not collective: call it on one rank).
func Delete(path string) error { return adio.Delete(path) }

// Buffer is a possibly noncontiguous memory buffer: Count instances of
// MemType laid out from the start of Buf (MPI's buf, count, datatype).
type Buffer = adio.Access

// Typed describes count instances of t in buf.
func Typed(buf []byte, count int, t *Type) Buffer {
	return Buffer{Buf: buf, Count: int64(count), MemType: t}
}

// SetView sets the view (collective): the file is seen from byte disp as
// filetype tiled without end, in units of etype. hints may change the hints
// that are not open-only. The individual and shared file pointers go back
// to 0. disp must be >= 0; to start a view where a pointer is (MPI's
// MPI_DISPLACEMENT_CURRENT), pass ByteOffset(Position()) or
// ByteOffset(PositionShared()) computed before.
func (f *File) SetView(disp int64, etype, filetype *Type, hints Hints) error {
	return f.f.SetView(adio.View{Disp: disp, Etype: etype, Filetype: filetype}, hints)
}

// View returns the current view.
func (f *File) View() (disp int64, etype, filetype *Type) {
	v := f.f.View()
	return v.Disp, v.Etype, v.Filetype
}

// short turns a short read into io.EOF, as io.ReaderAt requires.
func short(n int64, want int, err error) (int, error) {
	if err == nil && n < int64(want) {
		err = io.EOF
	}
	return int(n), err
}

// WriteAt writes p at offset off (independent).
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.f.WriteAt(adio.Bytes(p), off)
	return int(n), err
}

// ReadAt reads len(p) bytes at offset off (independent); fewer only at end
// of file, with io.EOF.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(adio.Bytes(p), off)
	return short(n, len(p), err)
}

// WriteAtAll writes p at offset off (collective).
func (f *File) WriteAtAll(p []byte, off int64) (int, error) {
	n, err := f.f.WriteAtAll(adio.Bytes(p), off)
	return int(n), err
}

// ReadAtAll reads len(p) bytes at offset off (collective); fewer only at
// end of file, with io.EOF.
func (f *File) ReadAtAll(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAtAll(adio.Bytes(p), off)
	return short(n, len(p), err)
}

// Write writes p at the individual file pointer and advances it.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.Write(adio.Bytes(p))
	return int(n), err
}

// Read reads into p from the individual file pointer and advances it;
// io.EOF when fewer bytes remain.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.f.Read(adio.Bytes(p))
	return short(n, len(p), err)
}

// WriteAll is the collective Write.
func (f *File) WriteAll(p []byte) (int, error) {
	n, err := f.f.WriteAll(adio.Bytes(p))
	return int(n), err
}

// ReadAll is the collective Read.
func (f *File) ReadAll(p []byte) (int, error) {
	n, err := f.f.ReadAll(adio.Bytes(p))
	return short(n, len(p), err)
}

// WriteAtBuffer writes a noncontiguous buffer at offset off (independent).
func (f *File) WriteAtBuffer(b Buffer, off int64) (int64, error) { return f.f.WriteAt(b, off) }

// ReadAtBuffer reads into a noncontiguous buffer (independent); it returns
// the bytes read, fewer than b's size only at end of file.
func (f *File) ReadAtBuffer(b Buffer, off int64) (int64, error) { return f.f.ReadAt(b, off) }

// WriteAtAllBuffer is the collective WriteAtBuffer.
func (f *File) WriteAtAllBuffer(b Buffer, off int64) (int64, error) { return f.f.WriteAtAll(b, off) }

// ReadAtAllBuffer is the collective ReadAtBuffer.
func (f *File) ReadAtAllBuffer(b Buffer, off int64) (int64, error) { return f.f.ReadAtAll(b, off) }

// Seek moves the individual file pointer (in etypes) relative to
// io.SeekStart, io.SeekCurrent or io.SeekEnd, and returns the new position.
func (f *File) Seek(off int64, whence int) (int64, error) { return f.f.Seek(off, whence) }

// Position returns the individual file pointer, in etypes.
func (f *File) Position() int64 { return f.f.Position() }

// The shared file pointer: one position (in etypes of the view) for all
// ranks of the file. It starts at 0 (at the end of file with ModeAppend),
// and SetView resets it to 0. Shared calls are independent and land in the
// order the ranks reach the pointer; ordered calls are collective and put
// every rank's data after that of the ranks before it, in rank order (MPI's
// *_shared and *_ordered calls).

// WriteShared writes p at the shared file pointer and advances the
// pointer past it (independent).
func (f *File) WriteShared(p []byte) (int, error) {
	_, n, err := f.f.WriteShared(adio.Bytes(p))
	return int(n), err
}

// ReadShared reads len(p) bytes from the shared file pointer and advances
// the pointer by len(p) (independent); fewer bytes only at end of file,
// with io.EOF.
func (f *File) ReadShared(p []byte) (int, error) {
	_, n, err := f.f.ReadShared(adio.Bytes(p))
	return short(n, len(p), err)
}

// WriteOrdered writes every rank's p in rank order from the shared file
// pointer and advances the pointer past all of them (collective).
func (f *File) WriteOrdered(p []byte) (int, error) {
	_, n, err := f.f.WriteOrdered(adio.Bytes(p))
	return int(n), err
}

// ReadOrdered reads, in rank order from the shared file pointer, len(p)
// bytes for every rank and advances the pointer past all of them
// (collective); fewer bytes only at end of file, with io.EOF.
func (f *File) ReadOrdered(p []byte) (int, error) {
	_, n, err := f.f.ReadOrdered(adio.Bytes(p))
	return short(n, len(p), err)
}

// WriteSharedBuffer is WriteShared for a noncontiguous buffer.
func (f *File) WriteSharedBuffer(b Buffer) (int64, error) {
	_, n, err := f.f.WriteShared(b)
	return n, err
}

// ReadSharedBuffer is ReadShared for a noncontiguous buffer; it returns
// the bytes read, fewer than b's size only at end of file.
func (f *File) ReadSharedBuffer(b Buffer) (int64, error) {
	_, n, err := f.f.ReadShared(b)
	return n, err
}

// WriteOrderedBuffer is WriteOrdered for a noncontiguous buffer.
func (f *File) WriteOrderedBuffer(b Buffer) (int64, error) {
	_, n, err := f.f.WriteOrdered(b)
	return n, err
}

// ReadOrderedBuffer is ReadOrdered for a noncontiguous buffer.
func (f *File) ReadOrderedBuffer(b Buffer) (int64, error) {
	_, n, err := f.f.ReadOrdered(b)
	return n, err
}

// SeekShared moves the shared file pointer (in etypes) relative to
// io.SeekStart, io.SeekCurrent or io.SeekEnd and returns the new position
// (collective: every rank passes the same off and whence).
func (f *File) SeekShared(off int64, whence int) (int64, error) { return f.f.SeekShared(off, whence) }

// PositionShared returns the shared file pointer, in etypes (independent).
func (f *File) PositionShared() (int64, error) { return f.f.PositionShared() }

// ByteOffset converts an offset in etypes of the view to a byte offset in
// the file.
func (f *File) ByteOffset(off int64) (int64, error) { return f.f.ByteOffset(off) }

// Sync flushes all ranks' writes to storage (collective).
func (f *File) Sync() error { return f.f.Sync() }

// Size returns the file size in bytes.
func (f *File) Size() (int64, error) { return f.f.Size() }

// SetSize truncates or extends the file (collective).
func (f *File) SetSize(size int64) error { return f.f.SetSize(size) }

// Preallocate reserves storage for the first size bytes (collective).
func (f *File) Preallocate(size int64) error { return f.f.Preallocate(size) }

// SetAtomicity turns MPI atomic mode on or off (collective).
func (f *File) SetAtomicity(on bool) error { return f.f.SetAtomicity(on) }

// Atomicity reports whether atomic mode is on.
func (f *File) Atomicity() bool { return f.f.Atomicity() }

// Info returns the effective hints: the caller's, the defaults, and the
// values collio derived (MPI_File_get_info).
func (f *File) Info() map[string]string { return f.f.Info() }

// Warnings returns what the open ignored or fell back from, and why: an
// unreadable ROMIO_HINTS file, a hint not in effect on this file system,
// an E10 cache that could not be used. Rank 0 also prints them to
// standard error at open.
func (f *File) Warnings() []string { return f.f.Hints().Warnings() }

// Path returns the path the file was opened with.
func (f *File) Path() string { return f.f.Path() }

// Mode returns the access mode.
func (f *File) Mode() Mode { return f.f.Mode() }

// Close closes the file (collective).
func (f *File) Close() error { return f.f.Close() }

// Stats are the metrics of collective calls: strategy and why it was
// chosen, rounds, aggregators, time in each phase, messages and bytes.
type Stats = metrics.Call

// Stats returns this rank's metrics of the last collective call and the
// totals since open.
func (f *File) Stats() (last, total Stats) { return f.f.Stats() }

// CacheStats are the counters of a rank's E10 node-local cache: bytes
// cached and copied, copy errors, and the time Sync, Close and collective
// calls waited for copies (NotHidden: the paper's not_hidden_sync).
type CacheStats = cache.Stats

// CacheStats returns this rank's E10 cache counters; false when the file
// has no cache on this rank (e10_cache=disable, read-only, or the cache
// could not be opened).
func (f *File) CacheStats() (CacheStats, bool) { return cache.StatsOf(f.f.DriverFile()) }

// Aggregators returns the ranks that do collective buffering for this
// file, in file-domain order (cb_nodes, cb_config_list).
func (f *File) Aggregators() []int { return append([]int(nil), f.f.Aggregators()...) }
