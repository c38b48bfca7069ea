package adio

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/collio/collio/metrics"
)

// Collective transfers. Every rank calls them; every rank returns the same
// error. The strategy (two-phase, independent, ...) is chosen from the
// hints and the ranks' access ranges, the same way on every rank.

// WriteAtAll writes a at offset off (etypes) collectively.
func (f *File) WriteAtAll(a Access, off int64) (int64, error) {
	return f.collective("write_at_all", true, a, func() int64 { return off }, false)
}

// ReadAtAll reads into a from offset off (etypes) collectively.
func (f *File) ReadAtAll(a Access, off int64) (int64, error) {
	return f.collective("read_at_all", false, a, func() int64 { return off }, false)
}

// WriteAll writes a at the individual file pointer collectively and
// advances the pointer.
func (f *File) WriteAll(a Access) (int64, error) {
	return f.collective("write_all", true, a, f.Position, true)
}

// ReadAll reads into a from the individual file pointer collectively and
// advances the pointer by what was read.
func (f *File) ReadAll(a Access) (int64, error) {
	return f.collective("read_all", false, a, f.Position, true)
}

// Stats returns the metrics of the last collective call on this rank and
// the totals over all collective calls since open.
func (f *File) Stats() (last, total metrics.Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.total
}

// LastCall returns the metrics of the last collective call on this rank
// (Stats without the totals' copy: read after every call from C).
func (f *File) LastCall() metrics.Call {
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	return last
}

func (f *File) collective(op string, write bool, a Access, offset func() int64, advance bool) (int64, error) {
	if err := f.usable(op); err != nil {
		return 0, err // a closed or nil file cannot reach its peers
	}
	start := monotonic()
	f.last = metrics.Call{Op: op, Bytes: a.Size()}
	f.pub.takeWaited() // waits of independent calls and closes are not this call's
	off := offset()
	v := f.View()
	f.stepCall(write)
	f.recordCall(op, v, a, off)
	f.learned.under(f.viewShape)
	if reason, ok := f.noAgreement(write); ok {
		return f.unsynchronized(op, write, reason, v, a, off, advance, start)
	}
	if reason, ok := f.repeatsIndependent(write); ok {
		return f.unsynchronized(op, write, reason, v, a, off, advance, start)
	}
	if reason, ok, err := f.recheckInBackground(op, write, v, a, off); err != nil {
		return 0, err
	} else if ok {
		return f.unsynchronized(op, write, reason, v, a, off, advance, start)
	}
	c := &call{f: f, op: op, view: v, access: a, off: off}
	if !write {
		c.eof = new(coll.EndOfFile)
	}
	pending, err := f.enter(c, write, f.checkTransfer(op, v, a, off, write))
	if err != nil {
		return 0, err
	}
	if pending != nil {
		if err := f.drainCached(op, write, c.ranges, pending); err != nil {
			return 0, err
		}
	}
	if f.pub.pending {
		// A call over the pending writes' bytes needs their syncs now, on
		// every rank that owes one (every rank knows the ranges alike).
		if span, ok := coll.Span(c.ranges); ok && span.Start < f.pub.span.End && f.pub.span.Start < span.End {
			f.kickPublication()
		}
	}
	// Every rank evaluates the table on the same inputs: no agreement needed.
	sit := situation{write: write, ranges: c.ranges, nodes: f.nodes.Count(), striped: f.striped(), sieve: f.sieves(write), bytes: c.bytes, pieces: c.pieces}
	name, reason, err := chooseStrategy(&f.cfg, sit)
	if err != nil {
		return 0, ioerr.Wrap(err, op, f.path, -1) // the same text on every rank
	}
	f.measured.observe(c.prevTook)
	name, reason, sh, cand := f.measuredChoice(sit, name, reason)
	f.measured.timing(sh, cand, f.seq, c.bytes)
	// Timed from here: the wait for ranks that came late to the entry
	// is the program's, not the strategy's.
	timed := monotonic()
	f.last.Strategy, f.last.Reason = name, reason
	c.aggs = c.aggregators(name)
	if k := sh.aggregators(cand); k > 0 && k < len(c.aggs) {
		c.aggs = c.aggs[:k] // a candidate on fewer aggregators
	}
	c.noAffinity = sh.noAffinity(cand)
	c.deferred = name == hints.StrategyIndependent && f.defersAgreement() && !f.cached
	// A trial of independent I/O is no pattern to repeat without
	// agreement: the next calls try the other candidates.
	f.learned.learn(write, c.deferred && (sh == nil || sh.settledOn(cand)))
	s := c.strategy(name)
	var n int64
	// Aggregators write other ranks' bytes, which those ranks may read
	// next through their own node's client: they reach the servers in the
	// background (publish.go) or before the call returns.
	publish := write && name != hints.StrategyIndependent && f.nodeCaches
	deferSync := publish && f.defersPublication()
	if deferSync {
		f.readyBoard(op)
		deferSync = f.pub.board != nil
	}
	if write {
		err = s.write(c)
		// A timed independent write also syncs where a node's client
		// holds writes back: its many small writes return before the data
		// left the node and slow the calls after it, so it would look
		// faster than it is and be kept where it is slower. (The
		// aggregating candidates' syncs, when deferred, cover a few large
		// writes per node.)
		timedWriteBehind := sh != nil && name == hints.StrategyIndependent && f.nodeCaches
		if err == nil && (publish && !deferSync || timedWriteBehind) {
			stop := metrics.Timer(&f.last.Publish)
			err = f.flushNodeCache()
			stop()
		}
		n = a.Size()
	} else {
		n, err = s.read(c)
	}
	if c.deferred {
		// Every rank did its own I/O: nothing this rank returns depends
		// on another rank, so the outcome is agreed at the next
		// synchronizing call.
		if err != nil {
			err = f.wrap(err, op)
			f.owe(op, f.seq, err)
			return 0, err
		}
	} else if deferSync {
		stopAgree := metrics.Timer(&f.last.Agree)
		mine := f.publishes()
		all, err := f.agreeRecord(op, err, []uint64{flag(mine), flag(f.pub.readBack)})
		stopAgree()
		if err != nil {
			return 0, err
		}
		started, readBack := int64(0), false
		for r := 0; r < len(all); r += 2 {
			started += int64(all[r])
			readBack = readBack || all[r+1] != 0
		}
		span, _ := coll.Span(c.ranges)
		f.startPublication(f.seq, span, mine, started)
		if readBack {
			// A rank read its bytes back before the others had synced
			// them and waited for their delayed syncs: every rank syncs
			// at the end of each later write instead.
			f.pub.off = "a rank read back bytes of a collective write before every rank had synced them"
		}
	} else {
		stopAgree := metrics.Timer(&f.last.Agree)
		if write {
			err = f.agree(op, err)
		} else {
			n, err = f.agreeRead(op, c, n, err)
		}
		stopAgree()
		if err != nil {
			return 0, err
		}
		if span, ok := coll.Span(c.ranges); write && ok {
			// The aggregators synced what they wrote for other ranks:
			// this node's client must not serve its older pages of it.
			stop := metrics.Timer(&f.last.Publish)
			err := f.dropNodeCache(span.Start, span.End)
			stop()
			if err != nil {
				return 0, f.wrap(err, op)
			}
		}
	}
	f.last.Publish += f.pub.takeWaited()
	end := monotonic()
	if sh != nil {
		f.measured.took(f.seq, int64(end-timed))
	}
	f.finishCallAt(v, off, n, advance, start, end)
	return n, nil
}

// clockBase anchors monotonic.
var clockBase = time.Now()

// monotonic is the time since clockBase: one read of the monotonic clock,
// where time.Now also reads the wall clock (about 22 against 44 ns here,
// twice in every call).
func monotonic() time.Duration { return time.Since(clockBase) }

// finishCall advances the file pointer and records the call's metrics.
func (f *File) finishCall(v View, off, n int64, advance bool, start time.Duration) {
	f.finishCallAt(v, off, n, advance, start, monotonic())
}

// finishCallAt is finishCall for a call that ended at end.
func (f *File) finishCallAt(v View, off, n int64, advance bool, start, end time.Duration) {
	f.mu.Lock()
	if advance {
		f.fp = off + n/v.Etype.Size()
	}
	f.last.Total = end - start
	f.total.Add(f.last)
	f.mu.Unlock()
}

// defersAgreement reports whether collio_error_agreement is deferred.
func (f *File) defersAgreement() bool {
	return f.cfg.deferAgreement
}

// noAgreement reports whether collective transfers of this direction
// need no communication at all: the agreement is deferred, the hints
// alone make the strategy independent on every rank (so no rank needs
// the others' ranges to choose), and no E10 cache may hold data another
// rank must see first. ROMIO makes no inter-rank communication either
// when collective buffering is disabled.
func (f *File) noAgreement(write bool) (reason string, ok bool) {
	if !f.defersAgreement() || f.cached {
		return "", false
	}
	switch st := f.cfg.strategy; {
	case st == hints.StrategyIndependent:
		return "collio_strategy=independent; no inter-rank communication (collio_error_agreement=deferred)", true
	case st != hints.StrategyAuto || f.cfg.noIndepRW:
		return "", false
	}
	if f.cfg.cb[direction(write)] != hints.Disable {
		return "", false
	}
	return cbDisabledReason[direction(write)], true
}

// cbDisabledReason is noAgreement's reason by direction, made once: a
// string built per call was the call's only allocation.
var cbDisabledReason = [2]string{
	hints.RomioCBRead + "=disable; no inter-rank communication (collio_error_agreement=deferred)",
	hints.RomioCBWrite + "=disable; no inter-rank communication (collio_error_agreement=deferred)",
}

// stepCall counts a collective call of this direction in the sequence and
// digest every rank keeps (by direction, opCodes[op]%2: the explicit-offset
// and file-pointer forms may mix).
func (f *File) stepCall(write bool) {
	f.seq++
	f.digest = f.digest*1099511628211 + uint64(direction(write)) + 1
}

// unsyncWritesAlone reports whether writes that run without inter-rank
// communication need no byte-range lock: no rank may read-modify-write
// (no sieving of writes, or every rank's view contiguous).
func (f *File) unsyncWritesAlone() bool {
	return !f.sieves(true) || f.viewsContiguous
}

func direction(write bool) int {
	if write {
		return 1
	}
	return 0
}

// unsynchronized runs a collective transfer with no inter-rank
// communication: each rank does its part with independent I/O. Without
// the ranks' ranges, writes take byte-range locks unless no rank can
// read-modify-write (romio_ds_write=disable, a write-only file, or every
// rank's view contiguous). An error is this rank's at once and every
// rank's at the next synchronizing call.
func (f *File) unsynchronized(op string, write bool, reason string, v View, a Access, off int64, advance bool, start time.Duration) (int64, error) {
	f.last.Strategy, f.last.Reason = hints.StrategyIndependent, reason
	var n int64
	var err error
	if write {
		n, err = f.writeAt(op, v, a, off, f.unsyncWritesAlone())
	} else {
		n, err = f.readAt(op, v, a, off)
	}
	// The call is its I/O: timed from the call's start, inline (a timer
	// closure would escape, an allocation per call).
	end := monotonic()
	f.last.IO += end - start
	f.last.IOWait += end - start
	if err != nil {
		err = f.wrap(err, op)
		f.owe(op, f.seq, err)
		return 0, err
	}
	f.finishCallAt(v, off, n, advance, start, end)
	return n, nil
}

// Operation codes, so ranks can check they are in the same call. The
// explicit-offset and file-pointer forms of one direction are one
// collective, as in ROMIO and OMPIO: PnetCDF has ranks with data call
// write_at_all while ranks with nothing call write_all with count 0.
// Codes 1 to 4 are the transfers; the rest the other collective calls
// (callrecord.go).
var opCodes = map[string]int64{"write_at_all": 1, "read_at_all": 2, "write_all": 3, "read_all": 4,
	"open": 16, "close": 17, "sync": 18, "set_view": 19, opSetViewCurrent: 20, "set_info": 21,
	"set_size": 22, "preallocate": 23, "set_atomicity": 24, "seek_shared": 25,
	"write_ordered": 26, "read_ordered": 27}

// opSetViewCurrent is set_view with MPI_DISPLACEMENT_CURRENT, which
// begins with a collective step of its own.
const opSetViewCurrent = "set_view (MPI_DISPLACEMENT_CURRENT)"

func isTransfer(op int64) bool { return op >= 1 && op <= 4 }

// sameCollective reports whether two operation codes may meet in one
// collective call: the same call, or transfers of the same direction,
// whichever form.
func sameCollective(a, b int64) bool {
	return a == b || isTransfer(a) && isTransfer(b) && a%2 == b%2
}

// ownRecord is the part of this call's entry record that this rank's
// arguments give: operation, call number, direction digest, bytes, and,
// unless local already failed, the file range and the pieces. local is
// returned, or the error of a range that cannot be computed.
func (f *File) ownRecord(op string, v View, a Access, off int64, local error) (entryRecord, error) {
	mine := entryRecord{op: opCodes[op], seq: f.seq, bytes: a.Size(), own: coll.OwnBlocks{Count: -1}, digest: f.digest}
	var pos int64
	if local == nil {
		var ok bool
		if pos, ok = dataPos(v, off, a.Size()); !ok {
			local = f.rangeErr(op, v, off, a.Size())
		}
	}
	if local == nil && a.Size() > 0 {
		s, e, err := fileRange(v, pos, a.Size())
		if err != nil {
			local = f.wrap(err, op)
		}
		mine.rng = coll.Range{Start: s, End: e}
	}
	if local == nil {
		mine.pieces = layout.PiecesOf(v.Filetype, pos, a.Size())
	}
	return mine, local
}

// enter is the first step of every collective transfer. One Allgather,
// with a deadline (collio_collective_timeout), tells every rank: whether
// any rank's arguments were bad (then all return that rank's error),
// whether all ranks are in the same call (operation and call number; a
// mismatch is ErrNotSame, a rank that never joins a timeout instead of a
// hang), the file range [start, end) each rank accesses and, with the
// E10 cache, the range of each rank's data not copied yet (pending), and
// for writes whether any rank may sieve (else independent writes need no
// locks).
func (f *File) enter(c *call, write bool, local error) (pending []coll.Range, err error) {
	defer metrics.Timer(&f.last.Plan)()
	v, a, off, op := c.view, c.access, c.off, c.op
	mine, local := f.ownRecord(op, v, a, off, local)
	mine.bad = local != nil || f.owed != nil
	mine.tookSeq, mine.tookNs = f.measured.tookSeq, f.measured.tookNs
	report := local == nil && f.reportsOwnBlocks()
	if report {
		mine.own = f.countOwnBlocks(coll.Access{Disp: v.Disp, Filetype: v.Filetype, DataStart: off * v.Etype.Size(), Size: a.Size()})
	}
	mine.maySieve = write && (local != nil || f.mayWriteSieve(v, a, off))
	if wb, ok := f.writeBack(); ok {
		if f.nodeCaches {
			// Copied is not yet seen on another node: not until synced.
			mine.pending.Start, mine.pending.End = wb.Unsynced()
		} else {
			mine.pending.Start, mine.pending.End = wb.Pending()
		}
		mine.fellBack = wb.FellBack()
	}
	const width = 8 * entryWords
	// The record buffers live as long as the file: a call allocates none.
	if len(f.entryAll) != width*(1+f.comm.Size()) {
		f.entryAll = make([]byte, width*(1+f.comm.Size()))
	}
	send, all := f.entryAll[:width], f.entryAll[width:]
	mine.encode(send)
	if err := agree.AllgatherWithin(f.comm, send, all, f.cfg.collectiveTimeout, op); err != nil {
		f.broken = ioerr.Wrap(err, op, f.path, f.rank())
		return nil, f.broken
	}
	rec := func(r int) entryRecord { return decodeEntry(all[width*r:]) }
	// Ranks in different calls stop here, before any further collective.
	if err := f.checkSameCall(all, width); err != nil {
		return nil, err
	}
	n := f.comm.Size()
	for r := range n {
		if rec(r).bad {
			return nil, f.agree(op, local)
		}
	}
	c.ranges = make([]coll.Range, n)
	c.noSieve = write
	if report {
		c.own = make([]coll.OwnBlocks, n)
	}
	if f.cached {
		pending = make([]coll.Range, n)
	}
	fell := -1
	for r := range n {
		e := rec(r)
		if e.tookSeq != f.measured.pending.seq || c.prevTook < 0 {
			c.prevTook = -1 // some rank did not finish that call: no figure
		} else {
			c.prevTook = max(c.prevTook, e.tookNs)
		}
		c.ranges[r] = e.rng
		c.bytes += e.bytes
		c.pieces += e.pieces
		c.noSieve = c.noSieve && !e.maySieve
		if report {
			c.own[r] = e.own
		}
		if f.cached {
			pending[r] = e.pending
			if fell < 0 && e.fellBack {
				fell = r
			}
		}
	}
	if fell >= 0 {
		f.cacheFellBack(fell)
	}
	return pending, nil
}

// cacheFellBack follows a rank whose E10 cache gave up (a reservation or
// cache write failed there): every rank writes the global file directly
// from now on, as when the cache cannot be opened, and rank 0 says so
// once. Data still cached elsewhere is drained by the calls that touch
// it, as before.
func (f *File) cacheFellBack(first int) {
	if wb, ok := f.writeBack(); ok && !wb.FellBack() {
		wb.FallBack()
	}
	if !f.cacheOff {
		f.cacheOff = true
		if set, err := f.hints.With(hints.E10Cache, hints.Disable); err == nil {
			f.setHints(set) // Info() tells the truth, as after a failed open
		}
		if f.rank() == 0 {
			fmt.Fprintf(f.stderr, "collio: warning: e10_cache: rank %d's cache could not take a write; every rank writes %s directly from now on\n", first, f.path)
		}
	}
}

// drainCached makes the global file current where this call will access
// it when some rank's E10 cache still holds data there, or copied it
// there unsynced where node clients cache (nodeCaches: another node does
// not see it yet); pending is every rank's bounds of such data. This
// call's aggregators may not be the ranks that cached it: they read the
// global file, and their own cached writes could be copied before the
// older ones. The bounds decide on every rank alike whether to stop at
// all; then each rank copies its extents that meet a rank's access range
// (or, if aggregators may read-modify-write holes, anything in the call's
// whole range), and the agreement that follows is the barrier: a failed
// copy is the call's error on every rank. Calls that no cached data comes
// near cost nothing.
func (f *File) drainCached(op string, write bool, ranges, pending []coll.Range) error {
	lo, hi := int64(0), int64(0)
	var region [][2]int64
	for _, r := range ranges {
		if r.End > r.Start {
			if hi == lo {
				lo, hi = r.Start, r.End
			}
			lo, hi = min(lo, r.Start), max(hi, r.End)
			region = append(region, [2]int64{r.Start, r.End})
		}
	}
	need := false
	for _, p := range pending {
		need = need || (p.End > p.Start && p.Start < hi && lo < p.End)
	}
	if !need {
		return nil
	}
	defer metrics.Timer(&f.last.CacheDrain)()
	if write && f.dsWriteOK {
		region = [][2]int64{{lo, hi}} // holes between the ranks' ranges are rewritten too
	}
	var err error
	if p := pending[f.rank()]; p.End > p.Start && p.Start < hi && lo < p.End {
		if wb, ok := f.writeBack(); ok {
			if err = wb.DrainRanges(region); err == nil {
				err = f.publishDrained(wb)
			}
		}
	}
	if err = f.agree(op, err); err != nil {
		return err
	}
	// The bytes now on the servers may be older in a node's client cache
	// (a read of the range before the cache's copy landed).
	return f.dropNodeCache(lo, hi)
}

func opName(code int64) string {
	for name, c := range opCodes {
		if c == code {
			return name
		}
	}
	return fmt.Sprintf("operation %d", code)
}

// agreeRead is agree for a read of n bytes that also settles where the
// file ends (coll.EndOfFile): the smallest end any rank's reads found
// rides in the agreement, and a strategy that left the count to it gets
// the access's bytes before that end.
func (f *File) agreeRead(op string, c *call, n int64, err error) (int64, error) {
	all, err := f.agreeRecord(op, err, []uint64{c.eof.Word()})
	if err != nil || !c.eof.Taken() {
		return n, err
	}
	end := slices.Min(all)
	if end == math.MaxUint64 {
		return n, nil // no read came up short
	}
	n, err = c.collAccess().BytesBefore(int64(end))
	if err != nil {
		return 0, f.wrap(err, op)
	}
	return n, nil
}
