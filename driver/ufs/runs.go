package ufs

/*
#include <errno.h>
#include <sys/types.h>
#include <sys/uio.h>

// collio_runs writes (or reads) n runs back to back: run i is cnt[i]
// buffers taken in order from iov, at file offset off[i]. It returns the
// index of the first run that failed or moved short (n when none did),
// with what that run's call moved in *moved and its errno in *err.
static long collio_runs(int fd, int write, const struct iovec *iov, const int *cnt,
		const long long *off, long n, long long *moved, int *err) {
	for (long i = 0; i < n; i++) {
		ssize_t want = 0;
		for (int k = 0; k < cnt[i]; k++)
			want += (ssize_t)iov[k].iov_len;
		ssize_t got;
		do {
			got = write ? pwritev(fd, iov, cnt[i], (off_t)off[i])
				    : preadv(fd, iov, cnt[i], (off_t)off[i]);
		} while (got < 0 && errno == EINTR);
		if (got != want) {
			*moved = got < 0 ? 0 : (long long)got;
			*err = got < 0 ? errno : 0;
			return i;
		}
		iov += cnt[i];
	}
	return n;
}
*/
import "C"

import (
	"runtime"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"github.com/collio/collio/driver"
)

// batchIOVs bounds the buffers of one batch (a batch is one C call).
const batchIOVs = 4096

// WriteRuns writes the runs in batches of one C call each, so that the Go
// scheduler hands the processor off once per batch instead of once per
// pwritev (driver.RunWriter). Files in memory too: their raw calls hand
// nothing off, but one C call per batch still costs less than one cgo
// call per run.
// A run the batch writes short (a signal, a file size limit, a full
// disk) is finished by WriteV, which retries or reports the error as
// usual.
func (f *file) WriteRuns(runs []driver.Run) (int64, error) {
	defer f.wrote.Store(true)
	if f.directOn(true) {
		return driver.WriteRuns(onlyFile{f}, runs) // run by run with O_DIRECT
	}
	return f.moveRuns(runs, true, func(p driver.Run) (int64, error) {
		n, err := f.WriteV(p.Bufs, p.Off)
		return int64(n), err
	})
}

// ReadRuns fills the runs in batches as WriteRuns writes them
// (driver.RunReader); bytes past end of file read as zeros.
func (f *file) ReadRuns(runs []driver.Run) (int64, error) {
	if f.directOn(false) {
		return driver.ReadRuns(onlyFile{f}, runs)
	}
	return f.moveRuns(runs, false, func(p driver.Run) (int64, error) {
		return driver.ReadRuns(onlyFile{f}, []driver.Run{p})
	})
}

// moveRuns writes or reads the runs in batches. finish moves one call's
// part in Go: the rest of a call the batch stopped short, and the rest of
// its run.
func (f *file) moveRuns(runs []driver.Run, write bool, finish func(driver.Run) (int64, error)) (int64, error) {
	op := "preadv"
	if write {
		op = "pwritev"
	}
	total := int64(0)
	b := batches.Get().(*batch)
	defer b.release()
	for i := 0; i < len(runs); {
		// Fill a batch: a run of more than iovMax buffers goes as several
		// calls, at the offsets where each part starts.
		b.reset()
		first := i
		for ; i < len(runs) && len(b.iov) < batchIOVs; i++ {
			b.add(runs[i])
		}
		done, moved, errno, err := b.move(f, op, write)
		if err != nil {
			return total, err
		}
		total += b.bytesBefore(done)
		if done == len(b.cnt) {
			continue
		}
		// Call done of the batch stopped short: finish it in Go, then
		// the rest of its run, then resume after the run.
		total += moved
		if errno != 0 {
			return total, f.pathErr(op, syscall.Errno(errno))
		}
		part := b.parts[done]
		rest := []driver.Run{{Off: part.Off + moved, Bufs: skip(part.Bufs, moved)}}
		for k := done + 1; k < len(b.cnt) && b.runOf[k] == b.runOf[done]; k++ {
			rest = append(rest, b.parts[k])
		}
		for _, p := range rest {
			n, err := finish(p)
			total += n
			if err != nil {
				return total, err
			}
		}
		i = first + b.runOf[done] + 1
	}
	return total, nil
}

// batch is the C side of some runs: iovecs, per-call buffer counts and
// offsets, and for each call the part of a run it writes.
type batch struct {
	iov   []C.struct_iovec
	cnt   []C.int
	off   []C.longlong
	parts []driver.Run // the call's buffers and offset, for finishing it in Go
	runOf []int        // index of the call's run within the batch
	runs  int
	pin   runtime.Pinner
}

func newBatch() *batch { return &batch{} }

// batches keeps batches between calls: a sieved or two-phase transfer
// moves its runs in one batch per call, and growing fresh slices (and a
// fresh Pinner's) for each took more CPU than the reads of a 16 MiB
// interleaved read from tmpfs.
var batches = sync.Pool{New: func() any { return newBatch() }}

// release empties b, dropping every reference to the caller's buffers,
// and pools it.
func (b *batch) release() {
	b.reset()
	clear(b.parts[:cap(b.parts)])
	batches.Put(b)
}

// reset empties the batch. The iovecs past the length are cleared too:
// cgo checks the whole array passed to C, and they point to buffers that
// are no longer pinned.
func (b *batch) reset() {
	clear(b.iov[:cap(b.iov)])
	b.iov, b.cnt, b.off, b.parts, b.runOf, b.runs = b.iov[:0], b.cnt[:0], b.off[:0], b.parts[:0], b.runOf[:0], 0
}

// add appends one run, as one call per iovMax non-empty buffers.
func (b *batch) add(r driver.Run) {
	bufs := r.Bufs // the loop below only reslices the list
	if slices.ContainsFunc(bufs, func(p []byte) bool { return len(p) == 0 }) {
		bufs = nonEmpty(bufs)
	}
	off := r.Off
	for len(bufs) > 0 {
		part := bufs[:min(len(bufs), iovMax)]
		bufs = bufs[len(part):]
		n := int64(0)
		for _, p := range part {
			b.pin.Pin(&p[0])
			b.iov = append(b.iov, C.struct_iovec{iov_base: unsafe.Pointer(&p[0]), iov_len: C.size_t(len(p))})
			n += int64(len(p))
		}
		b.cnt = append(b.cnt, C.int(len(part)))
		b.off = append(b.off, C.longlong(off))
		b.parts = append(b.parts, driver.Run{Off: off, Bufs: part})
		b.runOf = append(b.runOf, b.runs)
		off += n
	}
	b.runs++
}

// move runs the batch's calls in C. done is the index of the call that
// stopped short (len(b.cnt) when none did), moved what it moved, errno
// its error.
func (b *batch) move(f *file, op string, write bool) (done int, moved int64, errno int, err error) {
	defer b.pin.Unpin()
	if len(b.cnt) == 0 {
		return 0, 0, 0, nil
	}
	err = f.withFD(op, func(fd int) error {
		done, moved, errno = runCalls(fd, b, len(b.cnt), write)
		return nil
	})
	return done, moved, errno, err
}

// runCalls makes the first n calls of the batch in C (a variable, so
// that tests can stop a call short).
var runCalls = func(fd int, b *batch, n int, write bool) (done int, moved int64, errno int) {
	var m C.longlong
	var e C.int
	w := C.int(0)
	if write {
		w = 1
	}
	done = int(C.collio_runs(C.int(fd), w, &b.iov[0], &b.cnt[0], &b.off[0], C.long(n), &m, &e))
	return done, int64(m), int(e)
}

// bytesBefore is the length of the calls before call k.
func (b *batch) bytesBefore(k int) int64 {
	n := int64(0)
	for _, p := range b.parts[:k] {
		n += p.Len()
	}
	return n
}

// skip drops the first n bytes of a buffer list, without touching the
// caller's slice headers.
func skip(bufs [][]byte, n int64) [][]byte {
	return advance(nonEmpty(bufs), int(n))
}
