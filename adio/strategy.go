package adio

import (
	"fmt"
	"slices"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/topo"
)

// Strategies are registered in package coll by their own packages, which
// a program imports for that (collio and libcollio import all of them);
// adio names none. A file makes each strategy it uses once from its
// setting, and again after its hints change (setHints remakes cfg).

// Available returns the names of the strategies that can be chosen.
func Available() []string {
	var names []string
	for _, r := range coll.Registered() {
		names = append(names, r.Name)
	}
	return names
}

// setting is what strategies are made from.
func (f *File) setting() coll.Setting {
	return coll.Setting{Hints: f.hints, Layout: f.layout, Nodes: f.nodes}
}

// strategy returns the file's strategy of that name, made on first use.
func (f *File) strategy(name string) (coll.Strategy, error) {
	if s, ok := f.cfg.strategies[name]; ok {
		return s, nil
	}
	r, ok := coll.Lookup(name)
	if !ok {
		return nil, notAvailable(name)
	}
	if f.cfg.strategies == nil {
		f.cfg.strategies = make(map[string]coll.Strategy)
	}
	s := r.New(f.setting())
	f.cfg.strategies[name] = s
	return s, nil
}

// notAvailable is the error for a strategy no package registered.
func notAvailable(name string) error {
	return ioerr.New(ioerr.ErrUnsupported, "",
		"collio_strategy=%s is not available; available: auto, %v", name, Available())
}

// situation is what the selection table looks at. Every rank holds the
// same one, so every rank makes the same choice.
type situation struct {
	write   bool
	ranges  []coll.Range // every rank's file range in this call
	nodes   int          // nodes the ranks run on
	striped bool         // the file system reports striping (Lustre, BeeGFS, sim)
	sieve   bool         // independent I/O of this direction may use data sieving
	bytes   int64        // data all ranks move in the call
	pieces  int64        // file pieces all ranks access (estimated; 0: unknown)
}

// bidding is the situation as the strategies' bids and aggregator rules
// see it.
func (s situation) bidding() coll.Situation {
	return coll.Situation{Write: s.write, Ranges: s.ranges, Nodes: s.nodes, Striped: s.striped,
		Sieve: s.sieve, Bytes: s.bytes, Pieces: s.pieces}
}

// smallPieces reports whether the call's pieces average under
// coll.SmallPiece.
func (s situation) smallPieces() bool { return s.bidding().SmallPieces() }

// sievingNote says how independent I/O will sieve the call's pieces: with
// romio_ds_* automatic, pieces of sieveMinPiece or more are moved alone,
// so a call of such pieces sieves nothing.
func sievingNote(cfg *config, s situation) string {
	if cfg.ds[direction(s.write)] != hints.Automatic {
		return "with data sieving"
	}
	if s.pieces > 0 && s.meanPiece() >= sieveMinPiece {
		return fmt.Sprintf("moving its pieces (%s on average) alone: automatic data sieving merges pieces under %d KiB", pieceSize(s), sieveMinPiece>>10)
	}
	return fmt.Sprintf("with data sieving of the pieces under %d KiB (automatic)", sieveMinPiece>>10)
}

// pieceSize describes the call's mean piece for a reason.
func pieceSize(s situation) string {
	if s.pieces <= 0 {
		return "unknown size"
	}
	return fmt.Sprintf("%d bytes", s.meanPiece())
}

// meanPiece is the call's bytes per piece (0 when unknown).
func (s situation) meanPiece() int64 { return s.bidding().MeanPiece() }

// minSieveDensity is the smallest share of data in the ranks' ranges
// (all bytes ÷ the sum of every rank's range) for which rule 5 picks
// independent I/O: sieving reads and writes a rank's whole range, so at
// density d it moves 1/d times the data (np times with np ranks finely
// interleaved), while two-phase's cost goes with the pieces. With E3SM-like
// pieces (bench/c/pieces.c, 10^5-10^7 pieces of 8-64 bytes) independent I/O
// was the faster at np 4 (density 1/4), even at np 8, and two-phase at
// np 16 (density 1/16) for reads by 1.5-2x and mostly for writes.
const minSieveDensity = 1.0 / 8

// density is s.bytes over the sum of the ranks' ranges (1 when empty).
func (s situation) density() float64 {
	var span int64
	for _, r := range s.ranges {
		span += max(r.End-r.Start, 0)
	}
	if span == 0 {
		return 1
	}
	return float64(s.bytes) / float64(span)
}

// chooseStrategy is the selection table, in order:
//
//  1. collio_strategy other than auto: that strategy.
//  2. romio_no_indep_rw=true: two-phase (only its aggregators opened the file).
//  3. romio_cb_write (romio_cb_read for reads) = disable: independent I/O.
//  4. automatic and the ranks' ranges do not interleave (ROMIO's test):
//     independent I/O. With romio_lustre_coll_threshold > 0, writes to a
//     striped file system whose requests (the call's file pieces over all
//     ranks) average at most that many bytes go to step 6 instead, as in
//     ROMIO's Lustre driver (0, the default, keeps them independent).
//  5. automatic with interleaving, on one node without striping, with
//     data sieving allowed: independent I/O when the ranges are dense
//     enough (minSieveDensity), else two-phase. No network to aggregate
//     over: every rank's sieving windows go straight to the node's file
//     system (measured fastest here on every pattern of make bench).
//     Reads there without sieving, and with pieces of coll.SmallPiece bytes
//     or more: independent I/O too. Segmentation would have every rank
//     read its own pieces (automatic aggregators) and only add the
//     call's synchronizations; two-phase would copy every byte through
//     the exchange to save system calls that cost less than the copy.
//  6. Collective buffering (enable, or automatic with interleaving):
//     striped file system → two-phase with stripe-cyclic domains, so no
//     two aggregators share a lock unit; one node without striping →
//     dynamic segmentation (no read-modify-write, and with automatic
//     aggregators every rank writes its own pieces), or two-phase where
//     the pieces average under coll.SmallPiece bytes or writes
//     interleave; otherwise two-phase, as ROMIO. Before these: with
//     several nodes and at least tam.RanksPerNode ranks per node on
//     average, TAM, whose first layer cuts the messages each global
//     aggregator receives from the number of ranks to the number of local
//     aggregators. Each strategy states its part of this step as its
//     registration's bid (coll.Registration.Bid); the highest wins.
//
// Steps 2 to 5 name two-phase and independent I/O by their hint values;
// a name no package registered is an error, not a silent substitute.
//
// The reason is recorded in the call's metrics and shown by
// COLLIO_PRINT_HINTS=1.
func chooseStrategy(cfg *config, s situation) (name, reason string, err error) {
	name, reason = chooseByTable(cfg, s)
	if _, ok := coll.Lookup(name); !ok {
		return "", "", notAvailable(name)
	}
	return name, reason, nil
}

// chooseByTable is chooseStrategy's table.
func chooseByTable(cfg *config, s situation) (name, reason string) {
	if st := cfg.strategy; st != hints.StrategyAuto {
		return st, "collio_strategy=" + st
	}
	if cfg.ioServers {
		return hints.StrategyIndependent, "I/O servers: each rank hands its own data to the servers"
	}
	key := hints.RomioCBRead
	if s.write {
		key = hints.RomioCBWrite
	}
	cb := cfg.cb[direction(s.write)]
	switch {
	case cfg.noIndepRW:
		return hints.StrategyTwoPhase, "romio_no_indep_rw=true"
	case cb == hints.Disable:
		return hints.StrategyIndependent, key + "=disable"
	case cb == hints.Enable:
		name, reason = collectivePick(s)
		return name, key + "=enable; " + reason
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && s.sieve && s.density() >= minSieveDensity:
		return hints.StrategyIndependent, fmt.Sprintf("accesses interleave; one node, no striping, data density %.2f: independent I/O %s", s.density(), sievingNote(cfg, s))
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && s.sieve:
		return hints.StrategyTwoPhase, fmt.Sprintf("accesses interleave; one node, no striping, data density %.3f: two-phase merges the pieces", s.density())
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && !s.write && cfg.autoAggregators && !s.smallPieces():
		return hints.StrategyIndependent, fmt.Sprintf("reads interleave; one node, no striping, no data sieving, pieces of %s on average: each rank reads its own", pieceSize(s))
	case coll.Interleaved(s.ranges):
		name, reason = collectivePick(s)
		return name, "accesses interleave; " + reason
	}
	if t := cfg.lustreCollThresh; t > 0 && s.write && s.striped && s.pieces > 0 {
		// ROMIO's Lustre driver (ADIOI_LUSTRE_Docollect): small
		// non-interleaved requests are aggregated, large ones not.
		if s.meanPiece() <= t {
			name, reason = collectivePick(s)
			return name, fmt.Sprintf("no interleaving; requests of %d bytes on average, at most romio_lustre_coll_threshold=%d; %s", s.meanPiece(), t, reason)
		}
		return hints.StrategyIndependent, fmt.Sprintf("no interleaving; requests of %d bytes on average, above romio_lustre_coll_threshold=%d", s.meanPiece(), t)
	}
	return hints.StrategyIndependent, "no interleaving between ranks"
}

// collectivePick is step 6 of the table: the registered strategies'
// highest bid.
func collectivePick(s situation) (name, reason string) { return coll.Choose(s.bidding()) }

// autoAggregators reports whether collio picks the aggregators of each
// call itself: collio_auto_aggregators is on, the user set neither
// cb_nodes nor cb_config_list, and romio_no_indep_rw did not leave the
// file open on the open-time aggregators only.
func (f *File) autoAggregators() bool {
	return f.cfg.autoAggregators
}

// aggregators returns the aggregators of a call with the given
// strategy. With automatic aggregators: on a striped file system as many
// as stripes times romio_lustre_co_ratio (as ROMIO-TAM and GIO do), else
// as the strategy's rule says; otherwise, and for a strategy that does
// not aggregate, those chosen at open from cb_nodes and cb_config_list
// (ROMIO: one per node).
func (c *call) aggregators(name string) []int {
	f := c.f
	rule := coll.OpenAggregators
	if r, ok := coll.Lookup(name); ok && r.Aggregators != nil {
		rule = r.Aggregators(c.situation().bidding())
	}
	if rule == coll.NotAggregating || !f.autoAggregators() {
		return f.aggs
	}
	if f.striped() {
		k := f.layout.StripeCount * max(1, int(f.cfg.coRatio))
		aggs, _ := topo.Aggregators(f.nodes, min(f.comm.Size(), k), allRanks)
		return aggs
	}
	switch rule {
	case coll.EveryRank:
		aggs, _ := topo.Aggregators(f.nodes, f.comm.Size(), allRanks)
		return aggs
	case coll.ByVolume:
		return f.aggs[:volumeAggregators(c.bytes, f.cfg.bytesPerAgg, len(f.aggs))]
	}
	return f.aggs
}

// allRanks is a cb_config_list that allows every rank.
var allRanks = []hints.ConfigEntry{{Host: hints.AnyHost, Count: hints.AllProcs}}

// situation is the call's situation for the aggregator rules: the one the
// table saw (the direction from the operation code: writes are odd).
func (c *call) situation() situation {
	f := c.f
	write := opCodes[c.op]%2 == 1
	return situation{write: write, ranges: c.ranges, nodes: f.nodes.Count(), striped: f.striped(),
		sieve: f.sieves(write), bytes: c.bytes, pieces: c.pieces}
}

// volumeAggregators is how many of limit aggregators a call moving total
// bytes gets: one per perAgg bytes, at least one (OMPIO's bytes_per_agg
// rule). perAgg 0 keeps limit. The file's aggregators are ordered node
// round-robin, so the first k are on k different nodes.
func volumeAggregators(total, perAgg int64, limit int) int {
	if perAgg <= 0 || limit <= 1 {
		return limit
	}
	k := max((total+perAgg-1)/perAgg, 1)
	return int(min(int64(limit), k))
}

// ownBlocksReporter is the strategy whose own-blocks reports a call's
// entry record carries: the named one, or with collio_strategy=auto the
// first registered that reports with this file's setting; nil for none.
// It depends on hints and layout only, so every rank finds the same.
func (f *File) ownBlocksReporter() coll.OwnBlocksReporter {
	if !f.cfg.reporterFound {
		f.cfg.reporter, f.cfg.reporterFound = f.findOwnBlocksReporter(), true
	}
	return f.cfg.reporter
}

func (f *File) findOwnBlocksReporter() coll.OwnBlocksReporter {
	names := []string{f.cfg.strategy}
	if f.cfg.strategy == hints.StrategyAuto {
		names = Available()
	}
	for _, name := range names {
		s, err := f.strategy(name)
		if err != nil {
			continue
		}
		if r, ok := s.(coll.OwnBlocksReporter); ok && r.ReportsOwnBlocks() {
			return r
		}
	}
	return nil
}

// reportsOwnBlocks reports whether a collective call's entry record
// carries this rank's own-blocks report.
func (f *File) reportsOwnBlocks() bool { return f.ownBlocksReporter() != nil }

// countOwnBlocks is this rank's own-blocks report on its file side a.
func (f *File) countOwnBlocks(a coll.Access) coll.OwnBlocks {
	return f.ownBlocksReporter().OwnBlocks(a)
}

// striped reports whether the file system stripes this file.
func (f *File) striped() bool { return f.layout.StripeSize > 0 && f.layout.StripeCount > 0 }

// call is one collective transfer on one rank.
type call struct {
	f      *File
	op     string
	view   View
	access Access
	off    int64        // etypes
	ranges []coll.Range // every rank's file range, from the entry records
	aggs   []int        // this call's aggregators
	// noAffinity: a candidate of the measured choice on ROMIO's domains
	// (coll.Job.NoAffinityDomains).
	noAffinity bool
	// bytes and pieces are all ranks' data and estimated file pieces;
	// own their own-blocks reports (nil when the records carried none);
	// noSieve: the call writes and no rank may read-modify-write, so
	// independent writes need no byte-range locks even where ranges
	// interleave.
	bytes, pieces int64
	own           []coll.OwnBlocks
	noSieve       bool
	// deferred: the call ends without agreeing on its outcome
	// (collio_error_agreement=deferred, strategy independent), so no
	// barrier follows it either.
	deferred bool
	// prevTook is the slowest rank's time of the last timed call, from
	// the entry records (-1: not every rank timed that call).
	prevTook int64
	// eof: where a read's aggregators found the end of the file, agreed on
	// in the closing agreement (coll.EndOfFile); nil for writes.
	eof *coll.EndOfFile
}

// WriteIndependent is the independent strategy's write
// (coll.IndependentIO): every rank does its own part with independent
// I/O (with data sieving), as ROMIO does when collective buffering is
// off.
func (c *call) WriteIndependent() error {
	interleaved := coll.Interleaved(c.ranges)
	alone := !interleaved || c.noSieve
	if alone && c.deferred && c.f.sieves(true) && !c.f.viewsContiguous && c.access.Size() > 0 {
		// Lock-free writes are safe until the other ranks pass a
		// barrier; with no closing agreement a rank may go on to an
		// independent sieving write whose window covers this rank's
		// bytes. One lock over this rank's range (disjoint from the
		// others' in this call) keeps it out, at one lock per call;
		// interleaved ranges lock run by run instead.
		if interleaved {
			_, err := c.f.writeAt(c.op, c.view, c.access, c.off, false)
			return err
		}
		mine := c.ranges[c.f.rank()]
		if err := c.f.f.Lock(mine.Start, mine.End-mine.Start, true); err != nil {
			return err
		}
		defer c.f.f.Unlock(mine.Start, mine.End-mine.Start)
	}
	_, err := c.f.writeAt(c.op, c.view, c.access, c.off, alone)
	return err
}

// ReadIndependent is the independent strategy's read.
func (c *call) ReadIndependent() (int64, error) {
	return c.f.readAt(c.op, c.view, c.access, c.off)
}

// job is the call's coll.Job for the collective strategies, from the
// file's hints and the call's access, aggregators and entry records.
func (c *call) job() *coll.Job {
	f := c.f
	return &coll.Job{
		Comm:        f.comm,
		File:        f.callFile(c.op),
		Aggregators: c.aggs,
		Ranges:      c.ranges,
		Access:      c.collAccess(),
		BufSize:     f.cfg.cbBufferSize,
		TotalBytes:  c.bytes,
		Own:         c.own,
		RMW:         f.collectiveRMW(),
		Atomic:      f.Atomicity(),
		Overlap:     f.cfg.overlap,
		Buffers:     &f.buffers,
		Stats:       &f.last,
		Independent: c,
		EOF:         c.eof,

		NoAffinityDomains: c.noAffinity,
	}
}

// collAccess is the call's access as the strategies see it.
func (c *call) collAccess() coll.Access {
	a := c.access
	return coll.Access{
		Buf: a.Buf, MemType: a.MemType, Count: a.Count,
		Disp: c.view.Disp, Filetype: c.view.Filetype,
		DataStart: c.off * c.view.Etype.Size(), Size: a.Size(),
	}
}

// collectiveRMW reports whether two-phase aggregators read-modify-write
// the holes of a window (one write) or write each contiguous run:
// romio_ds_write=disable (or the E10 cache) turns it off everywhere, and
// romio_lustre_ds_in_coll=disable on a striped file system, as ROMIO's
// Lustre driver.
func (f *File) collectiveRMW() bool {
	return f.sieves(true) && !(f.striped() && f.cfg.lustreDSInColl == hints.Disable)
}

// run is a registered strategy run for one call. Only aggregators touch
// the file, so ranks that deferred their open (romio_no_indep_rw) take
// part without opening it; an aggregator of this call that has not opened
// it yet opens it now.
type run struct {
	s   coll.Strategy
	err error // the strategy could not be made
	// aggregating: the strategy has aggregators (not independent I/O).
	aggregating bool
}

// strategy returns the run of the named strategy for c.
func (c *call) strategy(name string) run {
	s, err := c.f.strategy(name)
	return run{s: s, err: err, aggregating: name != hints.StrategyIndependent}
}

func (r run) write(c *call) error {
	if err := r.ready(c); err != nil {
		return err
	}
	return r.s.Write(c.job())
}

func (r run) read(c *call) (int64, error) {
	if err := r.ready(c); err != nil {
		return 0, err
	}
	return r.s.Read(c.job())
}

func (r run) ready(c *call) error {
	if r.err != nil || !r.aggregating {
		return r.err
	}
	return c.openIfAggregator()
}

func (c *call) openIfAggregator() error {
	if slices.Contains(c.aggs, c.f.rank()) {
		return c.f.ensureOpen(c.op)
	}
	return nil
}

// describe is used in messages.
func (c *call) String() string { return fmt.Sprintf("%s at offset %d", c.op, c.off) }
