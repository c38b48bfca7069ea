package adio

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/metrics"
)

// Deferred publication. On a file system whose node caches are not
// coherent (nodeCaches), a collective write's aggregators write other
// ranks' bytes through their own node's client, whose write-behind may
// hold them; a rank may read back what it wrote (MPI's consistency for
// one process), so those bytes must reach the servers before that rank
// touches the file again. Syncing at the end of every call put that
// transfer on the call's critical path. Instead every rank that wrote
// syncs later, in the background (delayedSync): when a collective call
// meets the pending bytes, or publishDelay after its last deferred write;
// and each rank settles, waiting for every rank's sync, before it touches
// those bytes again: in a collective call where its strategy reads or
// writes them, at an independent transfer over them, nonblocking call,
// sync, set_size, preallocate, seek_shared or close. A size query does not
// wait: the pending writes end by their span's end (sizeShared).
//
// A collective call settles only where the rank's strategy touches the
// pending writes' span (settlingFile): a call's exchange overlaps the
// previous write's syncs, a rank that does no file I/O in a call does not
// wait, and writes elsewhere in the file (the next tile, the next
// variable) do not wait at all. Until a rank settles, the writes it took
// part in since stay pending on it.
//
// A rank learns that every sync is done from a board, a comm.Counter
// (served over TCP by rank 0 across nodes, no MPI call behind it, so the
// background goroutine may use it) to which each rank adds 1 for each
// write its sync covers, or stores a failure naming the rank when it
// failed. The write's closing agreement tells every rank how many ranks
// owe a sync of it, so every rank knows the value the board reaches once
// all are done.

// boardSlot is the board's value beside the shared file pointer's.
const boardSlot = 1

// publishKey keeps the board with the file's private communicator, like
// the shared file pointer's counter: the next open on it reuses it.
type publishKey struct{}

// keptBoard is a board and the value it reaches once every sync started
// so far is done (every rank holds the same target).
type keptBoard struct {
	comm.Counter
	// parent is the shared file pointer's counter the board is a sibling
	// of (nil for a board of its own).
	parent comm.Counter
	target int64
	// failed: a sync failed, and the board holds that failure: no later
	// file on the communicator uses it.
	failed bool
}

func (k *keptBoard) Release() error { return k.Free() }

// publishing is a file's deferred-publication state.
type publishing struct {
	board *keptBoard // nil until the first deferred write
	// off says why this file syncs at the end of each write although
	// collio_deferred_sync asks otherwise ("" when nothing stops it); set
	// alike on every rank.
	off string
	// pending: writes' syncs were started and this rank has not settled
	// them; span covers their file ranges, seq is the last one's call
	// number.
	pending bool
	span    coll.Range
	seq     int64
	// sync is this rank's delayed sync of its pending writes, nil if it
	// started none since it settled.
	sync *delayedSync
	// readBack: an independent access of this rank waited for other
	// ranks' syncs since the last deferred write; the next one's
	// agreement tells every rank.
	readBack bool
	// waited is how long settling waited since the current collective
	// call began (takeWaited at its start and end), for its report.
	waited time.Duration
}

// takeWaited returns the settling time since the last call and clears it.
func (p *publishing) takeWaited() time.Duration {
	d := p.waited
	p.waited = 0
	return d
}

// defersPublication reports whether a collective write with aggregators
// publishes in the background (every rank answers alike).
func (f *File) defersPublication() bool {
	return f.cfg.deferredSync && f.nodeCaches && !f.cached && !f.opFile && f.pub.off == "" && f.mode.canWrite()
}

// readyBoard makes (or takes over) the board before the file's first
// deferred write (collective). Where no rank can use a board from a
// goroutine, the file syncs at the end of each write instead.
func (f *File) readyBoard(op string) {
	if f.pub.board != nil {
		return
	}
	if k, ok := f.Kept(publishKey{}).(*keptBoard); ok && (k.parent == nil || k.parent == f.shared) {
		if k.failed {
			f.pub.off = "a background sync of an earlier file on this communicator failed"
			return
		}
		f.pub.board = k
		return
	}
	// A value beside the shared file pointer's costs nothing to set up;
	// a counter of its own costs a collective call and, across nodes, a
	// connection from every rank (tens of milliseconds at 16 ranks).
	if sib, ok := f.shared.(comm.CounterSiblings); ok {
		k := sib.Sibling(boardSlot)
		if _, ok := k.(comm.ConcurrentCounter); ok {
			f.pub.board = &keptBoard{Counter: k, parent: f.shared}
			f.Keep(publishKey{}, f.pub.board)
			return
		}
	}
	var why string
	var k comm.Counter
	maker, ok := comm.As[comm.CounterMaker](f.comm)
	if !ok {
		why = "the communicator cannot hold a counter"
	} else {
		var err error
		if k, err = maker.NewCounter(0); err != nil {
			why = "making the board failed: " + err.Error()
		} else if _, ok := k.(comm.ConcurrentCounter); !ok {
			why = "its counter needs MPI calls, which a background sync cannot make"
		}
	}
	// Every rank made the same kind of counter, or failed: one agreement
	// keeps the ranks alike when one rank alone failed.
	var err error
	if why != "" {
		err = fmt.Errorf("%s", why)
	}
	if aerr := f.agree(op, err); aerr != nil {
		if k != nil {
			_ = k.Free() // collective, as NewCounter was
		}
		if why == "" {
			why = "another rank could not make the board"
		}
		f.pub.off = why
		return
	}
	f.pub.board = &keptBoard{Counter: k}
	f.Keep(publishKey{}, f.pub.board)
}

// startPublication starts this rank's background sync after a collective
// write, whose agreement counted the ranks that sync (started), and marks
// the write's span pending.
func (f *File) startPublication(seq int64, span coll.Range, mine bool, started int64) {
	p := &f.pub
	p.board.target += started
	if p.pending && !p.span.Empty() {
		if span.Empty() {
			span = p.span
		} else {
			span = coll.Range{Start: min(span.Start, p.span.Start), End: max(span.End, p.span.End)}
		}
	}
	p.pending, p.span, p.seq = true, span, seq
	if !mine {
		return
	}
	file, board, rank, prev := f.f, p.board, int64(f.rank()), p.sync
	s := &delayedSync{kick: make(chan struct{}), superseded: make(chan struct{}), done: make(chan syncOutcome, 1)}
	p.sync = s
	if prev != nil {
		close(prev.superseded)
	}
	go s.run(file, board, rank, prev, publishDelay)
}

// publishDelay is how long a rank's sync of a deferred write waits before
// it starts on its own: for a later write, whose sync then covers both,
// or for a call that needs it, which starts it at once. A sync that ran
// while the next calls' writes went on made those writes wait for it
// (GlusterFS's client orders them behind it); a write phase of calls less
// than this apart syncs once, when the first call over its bytes comes or
// the phase has ended. It also bounds how long an independent access waits
// for another rank's sync.
var publishDelay = 200 * time.Millisecond

// delayedSync is one rank's sync of the writes it has pending. Only the
// file's goroutine kicks it; run's goroutine sends the outcome once.
type delayedSync struct {
	kick, superseded chan struct{}
	kicked           bool
	done             chan syncOutcome
}

// syncOutcome is how a delayedSync ended: synced (err its failure or the
// board's), or superseded before it began, owing its writes' count to the
// next one.
type syncOutcome struct {
	synced bool
	owed   int64
	err    error
}

// run syncs the file after delay, or at once when kicked, and adds to the
// board one for each write it covers (or stores its failure there). A
// later write's delayedSync supersedes one still waiting: that one stops
// and the later covers its writes.
func (s *delayedSync) run(file driver.File, board *keptBoard, rank int64, prev *delayedSync, delay time.Duration) {
	writes := int64(1)
	if prev != nil {
		o := <-prev.done
		if o.err != nil {
			s.done <- o // the board holds the failure already
			return
		}
		if !o.synced {
			writes += o.owed
		}
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-s.kick:
	case <-t.C:
	case <-s.superseded:
		select {
		case <-s.kick: // kicked too: a call waits for it
		default:
			s.done <- syncOutcome{owed: writes}
			return
		}
	}
	err := file.Sync()
	if err != nil {
		_ = board.Set(poisonOf(rank))
	} else {
		_, err = board.Add(writes)
	}
	s.done <- syncOutcome{synced: true, err: err}
}

// kickPublication starts this rank's delayed sync now.
func (f *File) kickPublication() {
	if s := f.pub.sync; s != nil && !s.kicked {
		s.kicked = true
		close(s.kick)
	}
}

// soloOp reports whether op is an operation of one rank (an independent
// transfer): the other ranks may not be in a call that
// starts their syncs.
func soloOp(op string) bool {
	return !strings.HasSuffix(op, "_all") && !settlesAt(op) && op != "close"
}

// publishes reports whether this rank syncs after a deferred write: it
// holds the file open for writing.
func (f *File) publishes() bool { return f.f != nil && f.mode.canWrite() }

// publicationPending reports whether this rank has a write to settle.
func (f *File) publicationPending() bool { return f.pub.pending }

// settle waits until every rank's sync of the pending write is done and
// drops this node's cached pages of its span, so that what follows sees
// the servers' bytes. A failed sync is reported once, with the same text
// on every rank that settles (the failing rank is read from the board);
// the collective call that reports it makes the file sync at the end of
// each write from then on (stopDeferring).
func (f *File) settle(op string) error {
	p := &f.pub
	if !p.pending {
		return nil
	}
	p.pending = false
	defer metrics.Timer(&p.waited)()
	var own error
	if p.sync != nil {
		f.kickPublication()
		o := <-p.sync.done
		own = o.err
		p.sync = nil
	}
	began := time.Now()
	failed, err := f.waitBoard(op)
	if soloOp(op) && time.Since(began) > publishDelay/2 {
		// Other ranks' syncs had not started: this rank read back (or
		// rewrote) its bytes while they went on with other things.
		p.readBack = true
	}
	if err != nil {
		p.board.failed = true
		return f.wrap(err, op)
	}
	if failed >= 0 || own != nil {
		p.board.failed = true
		e := &ioerr.Error{Class: ioerr.ErrIO, Op: op, Path: f.path, Rank: -1,
			Msg: fmt.Sprintf("the data of collective write %d may not have reached the file system: rank %d could not sync it", p.seq, failed)}
		if own != nil {
			e.Err = own
		}
		return e
	}
	return f.wrap(f.dropNodeCache(p.span.Start, p.span.End), op)
}

// settleFor settles before a transfer of a at off through v where it
// meets the pending writes' span. One elsewhere in the file goes ahead: it
// can neither see nor overtake bytes still to be synced (PnetCDF rewrites
// its header after each record write; a rank reads its inputs while its
// output's syncs wait).
func (f *File) settleFor(op string, v View, a Access, off int64) error {
	p := &f.pub
	if !p.pending {
		return nil
	}
	start, end, err := fileRange(v, off*v.Etype.Size(), a.Size())
	if err == nil && (p.span.Empty() || end <= p.span.Start || start >= p.span.End) {
		return nil
	}
	return f.settle(op)
}

// waitBoard waits until the board reaches its target (failed -1) or
// holds a failure (failed: the rank), within the file's collective
// timeout.
func (f *File) waitBoard(op string) (failed int, err error) {
	b := f.pub.board
	var deadline time.Time
	if f.cfg.collectiveTimeout > 0 {
		deadline = time.Now().Add(f.cfg.collectiveTimeout)
	}
	pause := 50 * time.Microsecond
	for {
		v, err := b.Add(0)
		switch {
		case err != nil:
			return -1, err
		case v < 0:
			return poisonedBy(v), nil
		case v >= b.target:
			return -1, nil
		case !deadline.IsZero() && time.Now().After(deadline):
			return -1, fmt.Errorf("ranks' syncs of collective write %d not done after %v (%d of %d)", f.pub.seq, f.cfg.collectiveTimeout, v, b.target)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// A failed sync stores poisonBase plus its rank shifted past the room the
// other ranks' later adds of 1 take, so that the value stays negative and
// still names the rank.
const (
	poisonBase  = -1 << 62
	poisonShift = 24
)

func poisonOf(rank int64) int64 { return poisonBase + rank<<poisonShift }

func poisonedBy(v int64) int { return int((v - poisonBase) >> poisonShift) }

// callFile is the driver file a collective call's strategy uses: the file
// itself, or, while a write is pending on this rank, the file behind a
// settlingFile.
func (f *File) callFile(op string) driver.File {
	if !f.pub.pending || f.f == nil {
		return f.f
	}
	return &settlingFile{File: f.f, span: f.pub.span, settle: func() error { return f.settle(op) }}
}

// settlingFile settles the file's pending writes before its first
// transfer that meets their span, and before anything that changes the
// file's size (a strategy may transfer from more than one goroutine). A
// transfer elsewhere in the file goes ahead while the syncs run: a
// program writing one region after another (collperf's tiles, a
// checkpoint's variables) waits for no sync until it reads back or
// closes. Transfers that meet the span must wait: a read would see the
// bytes as they were, a write could land before the older one that
// another node's client still holds.
type settlingFile struct {
	driver.File
	span   coll.Range
	once   sync.Once
	settle func() error
	err    error
}

func (s *settlingFile) ready() error {
	s.once.Do(func() { s.err = s.settle() })
	return s.err
}

// readyFor settles before a transfer of [off, off+n) that meets the span.
func (s *settlingFile) readyFor(off, n int64) error {
	if n <= 0 || off+n <= s.span.Start || off >= s.span.End {
		return nil
	}
	return s.ready()
}

// readyForRuns is readyFor over the runs' extent.
func (s *settlingFile) readyForRuns(runs []driver.Run) error {
	if len(runs) == 0 {
		return nil
	}
	lo, hi := runs[0].Off, runs[0].Off
	for _, r := range runs {
		lo, hi = min(lo, r.Off), max(hi, r.Off+r.Len())
	}
	return s.readyFor(lo, hi-lo)
}

// Unwrap lets driver.As find the layers below.
func (s *settlingFile) Unwrap() driver.File { return s.File }

func (s *settlingFile) ReadAt(p []byte, off int64) (int, error) {
	if err := s.readyFor(off, int64(len(p))); err != nil {
		return 0, err
	}
	return s.File.ReadAt(p, off)
}

func (s *settlingFile) WriteAt(p []byte, off int64) (int, error) {
	if err := s.readyFor(off, int64(len(p))); err != nil {
		return 0, err
	}
	return s.File.WriteAt(p, off)
}

func (s *settlingFile) ReadV(bufs [][]byte, off int64) (int, error) {
	if err := s.readyFor(off, driver.Run{Bufs: bufs}.Len()); err != nil {
		return 0, err
	}
	return s.File.ReadV(bufs, off)
}

func (s *settlingFile) WriteV(bufs [][]byte, off int64) (int, error) {
	if err := s.readyFor(off, driver.Run{Bufs: bufs}.Len()); err != nil {
		return 0, err
	}
	return s.File.WriteV(bufs, off)
}

func (s *settlingFile) ReadRuns(runs []driver.Run) (int64, error) {
	if err := s.readyForRuns(runs); err != nil {
		return 0, err
	}
	return driver.ReadRuns(s.File, runs)
}

func (s *settlingFile) WriteRuns(runs []driver.Run) (int64, error) {
	if err := s.readyForRuns(runs); err != nil {
		return 0, err
	}
	return driver.WriteRuns(s.File, runs)
}

func (s *settlingFile) Truncate(size int64) error {
	if err := s.ready(); err != nil {
		return err
	}
	return s.File.Truncate(size)
}

// Size is the file's size once the pending writes have landed: they
// end by the span's end, and everything before them has landed. Two-phase
// aggregators ask it for where holes begin; not settling keeps their
// writes elsewhere from waiting, and a window over the span reads, so
// settles.
func (s *settlingFile) Size() (int64, error) {
	size, err := s.File.Size()
	if err != nil {
		return 0, err
	}
	return max(size, s.span.End), nil
}

func (s *settlingFile) Allocate(off, length int64) error {
	if err := s.ready(); err != nil {
		return err
	}
	return s.File.Allocate(off, length)
}

// stopDeferring makes the file sync at the end of each write from now
// on, after a collective call failed: every rank returns that error, so
// every rank stops alike (settle's failures reach the ranks that settled
// only, and through them the call's agreement).
func (f *File) stopDeferring(err error) {
	if err != nil && f.pub.off == "" {
		f.pub.off = "an earlier collective call failed"
	}
}

// publicationFailed is close's error when a background sync of the file
// failed, reported already or not: the file's data may be incomplete.
func (f *File) publicationFailed(op string) error {
	if f.pub.board == nil || !f.pub.board.failed {
		return nil
	}
	return &ioerr.Error{Class: ioerr.ErrIO, Op: op, Path: f.path, Rank: -1,
		Msg: "a background sync of a collective write failed: the file may lack data written before it"}
}

// settlesAt reports whether the synchronizing call op settles in its
// agreement: the calls that read or change the file's size or data, or
// promise that it is stored. set_view, set_info and set_atomicity touch
// neither (PnetCDF resets the view after every write, which would wait
// for the syncs at once); transfers settle where their strategy touches
// the file (settlingFile), close before it closes the file.
func settlesAt(op string) bool {
	switch op {
	case "sync", "set_size", "preallocate", "seek_shared":
		return true
	}
	return false
}
