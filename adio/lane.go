package adio

import (
	"time"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/metrics"
)

// A Lane lets a caller outside this package serve the next collective
// calls of one direction with explicit offsets itself, with one pread or
// pwrite on the file's descriptor each, and report them afterwards
// (AddLaneCalls). libcollio does this in C, where a call through Go cost
// about 0.6 µs more than the system call for 16 KiB (cgo, the call's
// bookkeeping, its clock reads).
//
// It describes exactly what the next calls would do here: a call that
// repeats independent I/O without communication (collective buffering
// disabled, or a learned pattern between recheck points), through a
// contiguous view, lock-free, on a plain ufs descriptor. The caller must
// hand every call that is not like that (another datatype, a negative
// offset, a failed system call) back to this package, and must stop
// using the Lane at its first other call on the file: every change of
// state (a view, hints, atomicity, a nonblocking operation, close) goes
// through one.
type Lane struct {
	FD int
	// Base is the file offset of view offset 0: the byte of offset off
	// is Base + off*EtypeSize.
	Base, EtypeSize int64
	// Calls is how many calls the Lane may serve before one must come
	// here (the next recheck point); -1 for no limit.
	Calls int64
}

// rawFile is a driver file that moves its data with pread and pwrite on
// one descriptor (ufs). Only the File itself is asked, never through
// Unwrap: a decorator (the faulty driver, the E10 cache) must see every
// transfer.
type rawFile interface {
	RawFD() (int, bool)
}

// Lane reports whether the next collective calls of this direction may be
// served outside (see Lane), and how.
func (f *File) Lane(write bool) (Lane, bool) {
	if !f.laneFile(write) {
		return Lane{}, false
	}
	calls := int64(-1)
	if _, ok := f.noAgreement(write); !ok {
		if calls = int64(f.learned.repeatsLeft(write)); calls == 0 {
			return Lane{}, false
		}
	}
	if write && !f.unsyncWritesAlone() {
		return Lane{}, false // such writes lock their range
	}
	l, ok := f.laneView()
	l.Calls = calls
	return l, ok
}

// ReadLane is Lane for independent reads with explicit offsets (ReadAt),
// which take no lock and need no other rank: the Lane has no call limit.
// Independent writes get none: they lock their range against other
// ranks' read-modify-write.
func (f *File) ReadLane() (Lane, bool) {
	if !f.laneFile(false) {
		return Lane{}, false
	}
	l, ok := f.laneView()
	l.Calls = -1
	return l, ok
}

// laneFile reports whether the file's state allows a Lane of this
// direction at all.
func (f *File) laneFile(write bool) bool {
	if f.usable("") != nil || f.f == nil || f.opFile || f.cached || f.viaServers || f.rec != nil || len(f.pending) > 0 || f.publicationPending() {
		return false
	}
	return !((write && !f.mode.canWrite()) || (!write && !f.mode.canRead()) || f.mode&ModeSequential != 0)
}

// laneView is the Lane of the current view and descriptor: a contiguous
// view, not in atomic mode, on a raw ufs file.
func (f *File) laneView() (Lane, bool) {
	f.mu.Lock()
	v, atomic := f.view, f.atomic
	f.mu.Unlock()
	if atomic || v.Filetype.Size() == 0 || !v.Filetype.IsContiguous() {
		return Lane{}, false
	}
	raw, ok := f.f.(rawFile)
	if !ok {
		return Lane{}, false
	}
	fd, ok := raw.RawFD()
	if !ok {
		return Lane{}, false
	}
	// oneRunIn's offset for a contiguous filetype.
	return Lane{FD: fd, Base: v.Disp + v.Filetype.LB(), EtypeSize: v.Etype.Size()}, true
}

// LaneCalls is what a Lane served since it was handed out.
type LaneCalls struct {
	Calls, Bytes int64
	Time         time.Duration // the calls' time, start to end of each
	// LastBytes and LastTime are the last call's.
	LastBytes int64
	LastTime  time.Duration
}

// AddLaneCalls records calls a Lane of this direction served as if they
// had been made here: the sequence and digest every rank steps, the
// count towards the next recheck point, and the metrics (Stats, LastCall).
// It returns their sum, described as each call would be.
func (f *File) AddLaneCalls(write bool, n LaneCalls) metrics.Call {
	op := "read_at_all"
	if write {
		op = "write_at_all"
	}
	reason, ok := f.noAgreement(write)
	if !ok {
		reason = repeatReason
		f.learned.skip(write, int(n.Calls))
	}
	sum := metrics.Call{Op: op, Strategy: hints.StrategyIndependent, Reason: reason,
		Bytes: n.Bytes, IO: n.Time, IOWait: n.Time, Total: n.Time}
	if n.Calls <= 0 {
		return sum
	}
	for range n.Calls {
		f.stepCall(write)
	}
	last := sum
	last.Bytes, last.IO, last.IOWait, last.Total = n.LastBytes, n.LastTime, n.LastTime, n.LastTime
	f.mu.Lock()
	f.last = last
	f.total.Add(sum)
	f.mu.Unlock()
	return sum
}
