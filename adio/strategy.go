package adio

import (
	"fmt"
	"slices"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/segment"
	"github.com/collio/collio/tam"
	"github.com/collio/collio/topo"
	"github.com/collio/collio/twophase"
)

// overlap reports whether collio_overlap is on.
func (f *File) overlap() bool { return f.cfg.overlap }

// A strategy runs one rank's part of a collective transfer. The caller
// has already checked the arguments on every rank and gathered every
// rank's access range; it agrees on the error afterwards.
type strategy interface {
	write(c *call) error
	read(c *call) (int64, error)
}

// registration is one strategy in the registry: its collio_strategy
// name, its implementation, its selection predicate for step 6 of the
// automatic table (as OMPIO's components answer a file query) and its
// rule for automatic aggregators.
type registration struct {
	name string
	impl strategy
	// query is the priority the strategy bids for a call's situation, 0
	// for none, and why. The highest bid wins, the earlier entry on a
	// tie; a nil query never bids (the strategy is chosen by the table's
	// earlier steps or by name).
	query func(s situation) (priority int, reason string)
	// aggregators picks a call's aggregators when collio does (see
	// call.aggregators); nil keeps the open-time ones.
	aggregators func(c *call) []int
}

// registry holds every available strategy. Adding one is a package and
// an entry here (and its collio_strategy value in the hint table).
var registry = []registration{
	{name: hints.StrategyIndependent, impl: independent{}},
	{name: hints.StrategyTwoPhase, impl: twoPhase{}, query: twoPhaseBid, aggregators: domainAggregators},
	{name: hints.StrategyDynamic, impl: segmented{dynamic: true}, query: dynamicBid, aggregators: groupAggregators},
	{name: hints.StrategyStatic, impl: segmented{dynamic: false}, aggregators: groupAggregators},
	{name: hints.StrategyTAM, impl: twoLayer{}, query: tamBid},
}

// strategies is the registry by name.
var strategies = func() map[string]registration {
	m := make(map[string]registration, len(registry))
	for _, r := range registry {
		m[r.name] = r
	}
	return m
}()

// Available returns the names of the strategies that can be chosen.
func Available() []string {
	var names []string
	for n := range strategies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
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

// smallPiece: calls whose pieces average fewer bytes are dominated by the
// cost per piece (E3SM's flushes: about 16 bytes a piece). Two-phase
// merges such pieces at the aggregators into large writes; segmentation
// with a group per rank would write them one system call each.
const smallPiece = 4 << 10

// smallPieces reports whether the call's pieces average under smallPiece.
func (s situation) smallPieces() bool {
	return s.pieces > 0 && s.bytes < smallPiece*s.pieces
}

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
func (s situation) meanPiece() int64 {
	if s.pieces <= 0 {
		return 0
	}
	return s.bytes / s.pieces
}

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
//     Reads there without sieving, and with pieces of smallPiece bytes
//     or more: independent I/O too. Segmentation would have every rank
//     read its own pieces (automatic aggregators) and only add the
//     call's synchronizations; two-phase would copy every byte through
//     the exchange to save system calls that cost less than the copy.
//  6. Collective buffering (enable, or automatic with interleaving):
//     striped file system → two-phase with stripe-cyclic domains, so no
//     two aggregators share a lock unit; one node without striping →
//     dynamic segmentation (no read-modify-write, and with automatic
//     aggregators every rank writes its own pieces), or two-phase where
//     the pieces average under smallPiece bytes or writes interleave;
//     otherwise two-phase,
//     as ROMIO. Before these: with several nodes and at least
//     tamRanksPerNode ranks per node on average, TAM, whose first layer
//     cuts the messages each global aggregator receives from the number
//     of ranks to the number of local aggregators.
//     Each strategy states its part of this step as a bid in the
//     registry (tamBid, twoPhaseBid, dynamicBid); the highest wins.
//
// The reason is recorded in the call's metrics and shown by
// COLLIO_PRINT_HINTS=1.
func chooseStrategy(cfg *config, s situation) (name, reason string, err error) {
	if st := cfg.strategy; st != hints.StrategyAuto {
		if _, ok := strategies[st]; !ok {
			return "", "", ioerr.New(ioerr.ErrUnsupported, "",
				"collio_strategy=%s is not available yet; available: auto, %v", st, Available())
		}
		return st, "collio_strategy=" + st, nil
	}
	if cfg.ioServers {
		return hints.StrategyIndependent, "I/O servers: each rank hands its own data to the servers", nil
	}
	key := hints.RomioCBRead
	if s.write {
		key = hints.RomioCBWrite
	}
	cb := cfg.cb[direction(s.write)]
	switch {
	case cfg.noIndepRW:
		return hints.StrategyTwoPhase, "romio_no_indep_rw=true", nil
	case cb == hints.Disable:
		return hints.StrategyIndependent, key + "=disable", nil
	case cb == hints.Enable:
		name, reason = collectivePick(s)
		return name, key + "=enable; " + reason, nil
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && s.sieve && s.density() >= minSieveDensity:
		return hints.StrategyIndependent, fmt.Sprintf("accesses interleave; one node, no striping, data density %.2f: independent I/O %s", s.density(), sievingNote(cfg, s)), nil
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && s.sieve:
		return hints.StrategyTwoPhase, fmt.Sprintf("accesses interleave; one node, no striping, data density %.3f: two-phase merges the pieces", s.density()), nil
	case coll.Interleaved(s.ranges) && s.nodes == 1 && !s.striped && !s.write && cfg.autoAggregators && !s.smallPieces():
		return hints.StrategyIndependent, fmt.Sprintf("reads interleave; one node, no striping, no data sieving, pieces of %s on average: each rank reads its own", pieceSize(s)), nil
	case coll.Interleaved(s.ranges):
		name, reason = collectivePick(s)
		return name, "accesses interleave; " + reason, nil
	}
	if t := cfg.lustreCollThresh; t > 0 && s.write && s.striped && s.pieces > 0 {
		// ROMIO's Lustre driver (ADIOI_LUSTRE_Docollect): small
		// non-interleaved requests are aggregated, large ones not.
		if s.meanPiece() <= t {
			name, reason = collectivePick(s)
			return name, fmt.Sprintf("no interleaving; requests of %d bytes on average, at most romio_lustre_coll_threshold=%d; %s", s.meanPiece(), t, reason), nil
		}
		return hints.StrategyIndependent, fmt.Sprintf("no interleaving; requests of %d bytes on average, above romio_lustre_coll_threshold=%d", s.meanPiece(), t), nil
	}
	return hints.StrategyIndependent, "no interleaving between ranks", nil
}

// collectivePick is step 6 of the table: the registry's highest bid.
func collectivePick(s situation) (name, reason string) {
	best := 0
	for _, r := range registry {
		if r.query == nil {
			continue
		}
		if p, why := r.query(s); p > best {
			best, name, reason = p, r.name, why
		}
	}
	return name, reason
}

// Bids of step 6, highest first: TAM with many ranks per node on several
// nodes; two-phase on a striped file system, or on one node with tiny
// pieces or interleaved writes; dynamic segmentation on one node
// otherwise; two-phase anywhere.
const (
	bidTAM         = 40
	bidTwoPhase    = 30
	bidSegment     = 20
	bidTwoPhaseAny = 10
)

func tamBid(s situation) (int, string) {
	if s.nodes >= 2 && len(s.ranges) >= tamRanksPerNode*s.nodes {
		return bidTAM, fmt.Sprintf("%d ranks per node: two-layer aggregation (TAM)", len(s.ranges)/s.nodes)
	}
	return 0, ""
}

func twoPhaseBid(s situation) (int, string) {
	switch {
	case s.striped:
		return bidTwoPhase, "striped file system: two-phase, stripe-aligned domains"
	case s.nodes == 1 && s.smallPieces():
		return bidTwoPhase, fmt.Sprintf("one node, %d pieces of %d bytes on average: two-phase merges them", s.pieces, s.meanPiece())
	case s.nodes == 1 && s.write && coll.Interleaved(s.ranges):
		// Each aggregator writes its domain in one run instead of every
		// rank writing its share piece by piece (writes of one file queue
		// on its inode lock; reads from the page cache do not).
		return bidTwoPhase, "one node, writes interleave: two-phase merges them"
	case s.nodes == 1:
		return bidTwoPhaseAny, "one node: two-phase"
	}
	return bidTwoPhaseAny, "several nodes: two-phase"
}

func dynamicBid(s situation) (int, string) {
	if s.nodes == 1 && !s.striped {
		return bidSegment, "one node, no striping: dynamic segmentation"
	}
	return 0, ""
}

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
// as the strategy's registry entry says; otherwise those chosen at open
// from cb_nodes and cb_config_list (ROMIO: one per node).
func (c *call) aggregators(name string) []int {
	f := c.f
	if name == hints.StrategyIndependent || !f.autoAggregators() {
		return f.aggs
	}
	if f.striped() {
		k := f.layout.StripeCount * max(1, int(f.cfg.coRatio))
		aggs, _ := topo.Aggregators(f.nodes, min(f.comm.Size(), k), allRanks)
		return aggs
	}
	if pick := strategies[name].aggregators; pick != nil {
		return pick(c)
	}
	return f.aggs
}

// allRanks is a cb_config_list that allows every rank.
var allRanks = []hints.ConfigEntry{{Host: hints.AnyHost, Count: hints.AllProcs}}

// domainAggregators is two-phase's rule: on one node every rank (no
// network to save: each rank writes its own domain's data, and an
// aggregator's own data never goes through the exchange), else one per
// collio_bytes_per_agg bytes of the open-time ones.
func domainAggregators(c *call) []int {
	f := c.f
	if f.nodes.Count() == 1 {
		aggs, _ := topo.Aggregators(f.nodes, f.comm.Size(), allRanks)
		return aggs
	}
	return f.aggs[:volumeAggregators(c.bytes, f.cfg.bytesPerAgg, len(f.aggs))]
}

// groupAggregators is segmentation's rule: two-phase's, except on one
// node with tiny pieces, where a group per rank would write them one
// system call each: the open-time aggregators (ROMIO's, one per node)
// merge them instead.
func groupAggregators(c *call) []int {
	if c.f.nodes.Count() == 1 && (situation{bytes: c.bytes, pieces: c.pieces}).smallPieces() {
		return c.f.aggs
	}
	return domainAggregators(c)
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

// affinityDomains reports whether two-phase may use affinity domains:
// collio_file_domains=affinity, or auto without striping.
func (f *File) affinityDomains() bool {
	switch f.cfg.fileDomains {
	case hints.DomainsAffinity:
		return true
	case hints.DomainsAuto:
		return !f.striped()
	}
	return false
}

// ownGrid is the block size of two-phase's own-blocks check.
func (f *File) ownGrid() int64 { return twophase.OwnGrid(f.cfg.stripingUnit) }

// reportsOwnBlocks reports whether a collective call's entry record
// carries this rank's own-blocks report: when the call may run two-phase
// with affinity domains.
func (f *File) reportsOwnBlocks() bool {
	st := f.cfg.strategy
	return (st == hints.StrategyAuto || st == hints.StrategyTwoPhase) && f.affinityDomains()
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
}

// independent: every rank does its own part with independent I/O (with
// data sieving), as ROMIO does when collective buffering is off.
type independent struct{}

// Its file I/O (sieving reads included) is all IO, and none of it is
// hidden behind an exchange.
func (independent) write(c *call) error {
	defer c.f.timeIndependentIO()()
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

func (independent) read(c *call) (int64, error) {
	defer c.f.timeIndependentIO()()
	return c.f.readAt(c.op, c.view, c.access, c.off)
}

// timeIndependentIO records the time until the returned function is
// called as the call's IO and IOWait.
func (f *File) timeIndependentIO() func() {
	start := monotonic()
	return func() {
		d := monotonic() - start
		f.last.IO += d
		f.last.IOWait += d
	}
}

// job is the call's coll.Job for the collective strategies, from the
// file's hints and the call's access, aggregators and entry records.
func (c *call) job() *coll.Job {
	f := c.f
	a := c.access
	return &coll.Job{
		Comm:        f.comm,
		File:        f.f,
		Aggregators: c.aggs,
		Ranges:      c.ranges,
		Access: coll.Access{
			Buf: a.Buf, MemType: a.MemType, Count: a.Count,
			Disp: c.view.Disp, Filetype: c.view.Filetype,
			DataStart: c.off * c.view.Etype.Size(), Size: a.Size(),
		},
		BufSize:    f.cfg.cbBufferSize,
		TotalBytes: c.bytes,
		Own:        c.own,
		RMW:        f.collectiveRMW(),
		Atomic:     f.Atomicity(),
		Overlap:    f.cfg.overlap,
		Buffers:    &f.buffers,
		Stats:      &f.last,
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

// twoPhase: ROMIO's extended two-phase collective buffering.
type twoPhase struct{}

// Only aggregators touch the file, so ranks that deferred their open
// (romio_no_indep_rw) take part without opening it; an aggregator of this
// call that has not opened it yet opens it now.
func (twoPhase) write(c *call) error {
	if err := c.openIfAggregator(); err != nil {
		return err
	}
	return twophase.New(c.f.setting()).Write(c.job())
}

func (twoPhase) read(c *call) (int64, error) {
	if err := c.openIfAggregator(); err != nil {
		return 0, err
	}
	return twophase.New(c.f.setting()).Read(c.job())
}

func (c *call) openIfAggregator() error {
	if slices.Contains(c.aggs, c.f.rank()) {
		return c.f.ensureOpen(c.op)
	}
	return nil
}

// describe is used in messages.
func (c *call) String() string { return fmt.Sprintf("%s at offset %d", c.op, c.off) }

// segmented: OMPIO's dynamic or static segmentation (package segment):
// aggregators serve groups of ranks rather than file domains.
type segmented struct{ dynamic bool }

func (s segmented) write(c *call) error {
	if err := c.openIfAggregator(); err != nil {
		return err
	}
	return segment.Write(c.job(), s.dynamic, c.f.overlap())
}

func (s segmented) read(c *call) (int64, error) {
	if err := c.openIfAggregator(); err != nil {
		return 0, err
	}
	return segment.Read(c.job(), s.dynamic, c.f.overlap())
}

// tamRanksPerNode is how many ranks per node make the automatic table pick
// TAM: below it the intra-node layer saves too few messages to pay for
// moving the data twice (the paper's runs use 64 per node; the scale study
// in docs/benchmarks.md shows the message counts).
const tamRanksPerNode = 16

// twoLayer: TAM (package tam), two-phase with an intra-node first layer.
type twoLayer struct{}

func (t twoLayer) write(c *call) error {
	if err := c.openIfAggregator(); err != nil {
		return err
	}
	return tam.New(c.f.setting()).Write(c.job())
}

func (t twoLayer) read(c *call) (int64, error) {
	if err := c.openIfAggregator(); err != nil {
		return 0, err
	}
	return tam.New(c.f.setting()).Read(c.job())
}

// setting is what strategies are made from.
func (f *File) setting() coll.Setting {
	return coll.Setting{Hints: f.hints, Layout: f.layout, Nodes: f.nodes}
}
