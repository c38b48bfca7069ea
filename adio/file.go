// Package adio is collio's file object: the collective open/close
// protocol, file views, independent I/O with data sieving, collective
// entry points, and the agreement on errors that makes every rank return
// the same outcome from a collective call. It is the layer between the
// public API (package collio, the C library) and the drivers.
package adio

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/stack"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/commpool"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
	"github.com/collio/collio/topo"
)

// File is an open file shared by the ranks of a communicator.
//
// Collective methods must be called by every rank in the same order.
// Independent methods may be called by any rank alone. A File is meant to be
// used by one goroutine per rank at a time, like an MPI file handle.
type File struct {
	comm  comm.Comm       // private duplicate of the caller's communicator
	entry *commpool.Entry // comm and what is kept with it
	pool  *commpool.Pool  // the caller's communicator's pool, nil if it has none
	path  string          // as given by the caller (with any driver prefix)
	stack *stack.Stack    // the layers the file is opened through
	f     driver.File     // nil until opened on ranks that defer their open (romio_no_indep_rw)
	mode  Mode
	hints *hints.Set
	cfg   config // f.hints resolved; set both with setHints

	configList []hints.ConfigEntry // cb_config_list, parsed
	nodes      topo.Nodes          // which node each rank runs on
	aggs       []int               // collective-buffering aggregators, in file-domain order
	layout     driver.Layout       // striping, as the file system reports it
	dopts      driver.OpenOptions

	mu     sync.Mutex // guards the fields below against misuse from several goroutines
	view   View
	fp     int64 // individual file pointer, in etypes of the view
	atomic bool
	closed bool
	seq    int64 // collective transfers so far, to detect mismatched calls
	// digest folds the direction of every collective transfer since
	// open, so a synchronizing call notices ranks whose transfers differ
	// even where none of them synchronized (see noAgreement).
	digest uint64
	// owed is the error of a collective transfer whose ranks did not
	// agree on its outcome (collio_error_agreement=deferred): the file's
	// next synchronizing call returns it on every rank.
	owed error
	// viewsContiguous: every rank's current view has a contiguous
	// filetype (agreed at set_view), so no access maps to several runs and
	// no rank can read-modify-write another's bytes: independent writes
	// need no locks, with or without a barrier after them.
	viewsContiguous bool
	// viewShape is the agreed shape of every rank's current view
	// (viewShapeOf): the learned pattern carries over to a later view of
	// the same shape.
	viewShape uint64
	// learned is what the automatic choice learned of the pattern of
	// collective calls (learning.go).
	learned learning
	// measured is what the measured choice timed (measure.go).
	measured measuring
	// pub is the deferred publication of collective writes (publish.go).
	pub publishing
	// opFile: this File runs one nonblocking operation's call, which
	// rechecks in the foreground.
	opFile bool
	// streams keeps a stream over the view's tiles for the next transfer.
	streams streamCache
	// shared is the shared file pointer (shared.go); nil when the file
	// has none, and noShared says why.
	shared comm.Counter
	// sharedMoved: this rank moved the shared file pointer since it was
	// last reset; set_view resets it only when some rank did.
	sharedMoved bool
	noShared    string
	// slots are the private communicators of nonblocking operations;
	// pending the operations started and not waited for (nonblocking.go).
	slots   [opSlots]opSlot
	pending []*Request
	// entryAll holds a collective transfer's entry record and every
	// rank's, reused from call to call.
	entryAll []byte
	// callAll is the same for a synchronizing call's record (meet).
	callAll []byte
	broken  error        // set when a collective timed out: the communicator is unusable
	last    metrics.Call // the last collective call on this rank
	total   metrics.Call // all collective calls since open
	// buffers are the exchange buffers, kept between calls (they grow
	// only on aggregators), outside the Go heap, and released at Close.
	buffers coll.Buffers

	// cached is true on every rank when the E10 cache is in use
	// (openCache): this rank's driver file, if open, holds writes back
	// (driver.WriteBack).
	cached bool
	// cacheOff: some rank's cache gave up after open and every rank
	// writes through (cacheFellBack).
	cacheOff bool
	// dsWriteOK is false when the file could only be opened write-only, so
	// data sieving (which reads) cannot be used for writes.
	dsWriteOK bool
	// nodeCaches is true when ranks on several nodes share the file on a
	// file system whose per-node caches locks do not keep coherent
	// (noteNodeCaches).
	nodeCaches bool
	// viaServers: the file was opened on a compute communicator of
	// SplitIOServers; its driver hands every transfer to the I/O servers.
	viaServers bool
	// stderr is where COLLIO_PRINT_HINTS output goes; os.Stderr unless a
	// test replaces it.
	stderr io.Writer
	// rec records each collective call's access pattern (COLLIO_RECORD).
	rec *recorder
}

// Comm returns the file's private communicator.
func (f *File) Comm() comm.Comm {
	switch c := f.comm.(type) {
	case shapedComm:
		return c.Comm
	case spreadComm:
		return c.Comm
	}
	return f.comm
}

// Path returns the path the file was opened with.
func (f *File) Path() string { return f.path }

// Mode returns the access mode the file was opened with.
func (f *File) Mode() Mode { return f.mode }

// Hints returns the effective hints.
func (f *File) Hints() *hints.Set { return f.hints }

// Info returns the effective hints as key/value strings: what the caller
// asked for, the defaults, and what collio derived at open (for example the
// striping the file system reports).
func (f *File) Info() map[string]string { return f.hints.Map() }

// Driver returns the driver that serves this file.
func (f *File) Driver() driver.Driver { return f.stack.Driver() }

// DriverFile returns the open driver file, for strategies.
func (f *File) DriverFile() driver.File { return f.f }

// writeBack returns the layer of this rank's driver file that holds
// writes back (the E10 cache), when the cache is in use and the file open.
func (f *File) writeBack() (driver.WriteBack, bool) {
	if !f.cached || f.f == nil {
		return nil, false
	}
	return driver.WriteBackOf(f.f)
}

// Layout reports how the file is striped.
func (f *File) Layout() driver.Layout { return f.layout }

// Aggregators returns the ranks that do collective buffering, in
// file-domain order.
func (f *File) Aggregators() []int { return f.aggs }

// Nodes returns which node each rank runs on.
func (f *File) Nodes() topo.Nodes { return f.nodes }

func (f *File) rank() int { return f.comm.Rank() }

// errf builds an error of class c for operation op on this file and rank.
func (f *File) errf(c *ioerr.Class, op, format string, args ...any) error {
	return &ioerr.Error{Class: c, Op: op, Path: f.path, Rank: f.rank(), Msg: fmt.Sprintf(format, args...)}
}

// wrap classifies an error from a driver for operation op.
func (f *File) wrap(err error, op string) error {
	return ioerr.Wrap(err, op, f.path, f.rank())
}

// usable checks that the file is open.
func (f *File) usable(op string) error {
	if f == nil {
		return ioerr.New(ioerr.ErrBadFile, op, "file is nil")
	}
	if f.closed {
		return f.errf(ioerr.ErrBadFile, op, "file is closed")
	}
	if f.broken != nil {
		return f.errf(ioerr.ErrBadFile, op, "an earlier collective call failed and left the file unusable: %v", f.broken)
	}
	return nil
}

// agree is ioerr.Agree on the file's communicator, adding context.
//
// It is also the file's synchronizing point: an error owed by an earlier
// collective transfer that did not agree (collio_error_agreement=deferred)
// becomes this call's error on every rank, and ranks that made different
// collective transfers since open get ErrNotSame.
func (f *File) agree(op string, err error) error {
	_, err = f.agreeRecord(op, err, nil)
	return err
}

// agreeRecord is agree carrying a record of words from every rank in the
// same Allgather (meet, callrecord.go): rank r's words are all[r*len(mine):
// (r+1)*len(mine)].
func (f *File) agreeRecord(op string, err error, mine []uint64) (all []uint64, _ error) {
	if cerr := f.settleChecks(op); cerr != nil {
		return nil, cerr // a peer never joined: agreeing would hang
	}
	if settlesAt(op) {
		// Every rank settles here and sees the same failure.
		if serr := f.settle(op); serr != nil && err == nil {
			err = serr
		}
	}
	owed := f.owed
	if owed != nil && err == nil {
		err = owed
	}
	if err != nil {
		err = f.wrap(err, op)
	}
	f.owed = nil
	all, same, err := f.meet(op, err, mine)
	if !same && f.broken == nil {
		// The ranks were in different calls: the owed error is still owed.
		f.owed = owed
	}
	f.stopDeferring(err)
	return all, err
}

// owe keeps the error of a collective transfer that skipped the
// agreement, for the next synchronizing call; the failing rank returns
// it at once too. The first error owed wins.
func (f *File) owe(op string, seq int64, err error) {
	if f.owed == nil {
		f.owed = &ioerr.Error{Class: ioerr.ClassOf(err), Rank: -1, Err: err,
			Msg: fmt.Sprintf("an earlier collective call failed (call %d, %s, on rank %d): %v", seq, op, f.rank(), err)}
	}
}

// etypeSize returns the size in bytes of the view's etype.
func (f *File) etypeSize() int64 { return f.view.Etype.Size() }

var _ = layout.Byte
var _ = os.Stderr
