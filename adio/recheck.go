package adio

import (
	"fmt"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/metrics"
)

// Rechecking a learned pattern in the background. Once the automatic
// choice repeats independent I/O without communication
// (repeatsIndependent), a synchronous recheck would make the ranks that
// ran ahead wait there for the others, and on shared cores their waiting
// slows the ranks they wait for. So the call at a recheck point posts its entry record in a
// nonblocking Allgather and runs unsynchronized; the records are
// evaluated maxChecksInFlight recheck points later, where the ranks wait
// only if one has not reached the point that posted them. If they show a bad rank (an error owed),
// calls that did not match, or a pattern the automatic choice would no
// longer serve with independent I/O, that call synchronizes instead, as
// before. Every rank decides at the same call from the same records.

// backgroundCheck is an entry record posted without waiting.
type backgroundCheck struct {
	req     comm.Request
	all     []byte // every rank's record, once req completes
	write   bool
	seq     int64  // the call that posted it
	pattern uint64 // f.learned.pattern then: a later set_view or set_info voids it
}

// maxChecksInFlight is how many checks may be posted and not yet
// evaluated: a check is evaluated that many recheck points after the one
// that posted it, where a rank waits only if another has not reached the
// earlier point yet. With one, on shared cores, a rank waited at almost
// every recheck point for ranks the scheduler had kept off the core.
// checkBytesInFlight caps the records' memory (14 words per rank and
// check): two checks up to 18724 ranks, one beyond.
const (
	maxChecksInFlight  = 2
	checkBytesInFlight = 4 << 20
)

// checksInFlight is maxChecksInFlight within checkBytesInFlight for this
// file's rank count.
func (f *File) checksInFlight() int {
	per := 8 * entryWords * (1 + f.comm.Size())
	return max(1, min(maxChecksInFlight, checkBytesInFlight/per))
}

// backgroundReason is the reason COLLIO_STATS and Stats show for the
// calls that post a check.
var backgroundReason = repeatReason + "; this call's entry record is checked in the background, at the next recheck"

// recheckInBackground handles a call at a recheck point of a learned
// pattern (repeatsIndependent said no while the streak holds): it
// evaluates the oldest posted check once checksInFlight are posted, and
// posts this call's. ok: run this call unsynchronized with reason; not ok:
// this call synchronizes (the pattern did not hold, or rechecks run in the
// foreground here: in a nonblocking operation's call, with the E10 cache,
// with collio_error_agreement=immediate).
func (f *File) recheckInBackground(op string, write bool, v View, a Access, off int64) (reason string, ok bool, err error) {
	d := direction(write)
	if f.opFile || f.cached || !f.defersAgreement() || !f.learned.holds(write) {
		return "", false, nil
	}
	defer metrics.Timer(&f.last.Plan)() // the wait for a check is the entry's
	if q := f.learned.checks[d]; len(q) >= f.checksInFlight() {
		chk := q[0]
		f.learned.checks[d] = q[1:]
		holds, err := f.completeCheck(chk, op)
		if err != nil {
			return "", false, err
		}
		if !holds {
			return "", false, nil
		}
	}
	if err := f.postCheck(op, write, v, a, off); err != nil {
		return "", false, err
	}
	// As after an agreed call that chose the same: the next point comes
	// twice as far (up to lastRecheck) unless a check fails.
	f.learned.learn(write, true)
	return backgroundReason, true, nil
}

// postCheck starts the nonblocking Allgather of this call's entry record.
func (f *File) postCheck(op string, write bool, v View, a Access, off int64) error {
	// A range that cannot be computed fails this call here, and the
	// others synchronize at the evaluation.
	mine, local := f.ownRecord(op, v, a, off, nil)
	mine.bad = local != nil || f.owed != nil
	const width = 8 * entryWords
	buf := make([]byte, width*(1+f.comm.Size())) // one per recheck: 16 to lastRecheck calls apart
	mine.encode(buf[:width])
	req, err := f.comm.Iallgather(buf[:width], buf[width:])
	if err != nil {
		f.broken = ioerr.Wrap(err, op, f.path, f.rank())
		return f.broken
	}
	d := direction(write)
	f.learned.checks[d] = append(f.learned.checks[d], &backgroundCheck{req: req, all: buf[width:], write: write, seq: f.seq, pattern: f.learned.pattern})
	return nil
}

// completeCheck waits for a posted check (within collio_collective_timeout:
// a rank that never posts it is a timeout, not a hang) and reports whether
// the pattern held at the call that posted it.
func (f *File) completeCheck(chk *backgroundCheck, op string) (bool, error) {
	if err := agree.WaitWithin(f.comm, chk.req, f.cfg.collectiveTimeout, op); err != nil {
		f.broken = ioerr.Wrap(err, op, f.path, f.rank())
		return false, f.broken
	}
	return chk.pattern == f.learned.pattern && f.patternHolds(chk.write, chk.all), nil
}

// patternHolds evaluates every rank's record of one call as the entry of
// an agreed call would: no rank bad, all in the same call, and the
// automatic choice still independent I/O without agreement. Pure on the
// records and the file's settings, so every rank answers alike.
func (f *File) patternHolds(write bool, all []byte) bool {
	const width = 8 * entryWords
	n := f.comm.Size()
	first := decodeEntry(all)
	ranges := make([]coll.Range, n)
	var bytes, pieces int64
	for r := range n {
		e := decodeEntry(all[width*r:])
		if e.bad || !sameCollective(e.op, first.op) || e.seq != first.seq || e.digest != first.digest {
			return false
		}
		ranges[r] = e.rng
		bytes += e.bytes
		pieces += e.pieces
	}
	s := situation{write: write, ranges: ranges, nodes: f.nodes.Count(),
		striped: f.striped(), sieve: f.sieves(write), bytes: bytes, pieces: pieces}
	name, _, err := chooseStrategy(&f.cfg, s)
	if err != nil {
		return false
	}
	if kept, ok := f.measured.kept(s, name); ok && f.measures(s) {
		name = kept // the measured choice's, as the agreed call would run
	}
	return name == hints.StrategyIndependent
}

// settleChecks completes the checks still posted before a synchronizing
// call (which agrees on owed errors itself), so that no nonblocking
// collective outlives the call or the file. A rank that never posted
// makes this a timeout, named after op.
func (f *File) settleChecks(op string) error {
	for d, q := range f.learned.checks {
		f.learned.checks[d] = nil
		for _, chk := range q {
			if f.broken != nil {
				break // the communicator is unusable: nothing will complete
			}
			if err := agree.WaitWithin(f.comm, chk.req, f.cfg.collectiveTimeout, op); err != nil {
				f.broken = ioerr.Wrap(err, op, f.path, f.rank())
				return fmt.Errorf("%w (completing the background check of call %d)", f.broken, chk.seq)
			}
		}
	}
	return nil
}
