package adio

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/coll"
)

// The measured choice. The table (chooseStrategy) decides from the call's
// shape alone, by rules measured on one node; which strategy is fastest
// also depends on the network between the nodes, the file system's
// clients and the cores, which no rule sees. So where the table weighed
// collective buffering against independent I/O, or one aggregating
// strategy against another, and no hint decided, the agreed calls of one
// shape are timed: each candidate runs trialCalls calls in turn (one
// only, where that call was over slowerPercent per cent slower than
// another candidate's first call: a short phase of calls pays little for
// trying what is clearly slower; first calls against first calls, since
// a strategy's first call on a file also pays for what its later calls
// reuse), the fastest is kept, and another
// candidate runs again now and then (firstRetrial calls later, then twice
// as far up to lastRetrial).
//
// On several nodes the candidates of small writes include two-phase with
// half of its aggregators (one per node by default): how many aggregators
// fill the path to the servers depends on the links and the file system's
// client, which no rule sees either. Writes there also try two-phase on
// ROMIO's domains beside its affinity domains: affinity moves fewer bytes
// over the links but writes scattered blocks, and where each write is a
// request to a server (a FUSE client) those cost more than the bytes.
//
// Every rank makes the same choice: a rank sends how long its previous
// agreed call took in the next call's entry record, and every rank takes
// the slowest rank's time from the same Allgather. Times are one-sided
// noise (a rank kept off its core is slower, never faster), so a
// candidate's figure is the least of its last keptSamples times per MiB.
// Once every candidate was tried, figures are compared only when as
// recent as the kept one's: the kept candidate's figure is renewed by
// every call, the others' only by their retrials, and an old lucky figure
// must not win because the kept one slowed down for a while. So a
// retrial's call is its candidate's whole figure, and it replaces the
// kept one only when at least switchPercent per cent faster; where the
// kept one's figure grows that much past an older figure of another, that
// one is retried at the next call instead. A choice that changes between
// calls never changes the bytes: every strategy writes what the host's
// MPI-IO writes.
const (
	trialCalls    = 2
	slowerPercent = 25
	keptSamples   = 3
	firstRetrial  = 32
	lastRetrial   = 1024
	switchPercent = 10
	// maxShapes bounds the memory of programs whose calls never repeat a
	// shape; calls of further shapes keep the table's choice.
	maxShapes = 256
)

// shapeKey says which calls are alike: the same direction and table
// choice, and sizes and mean pieces within a power of two.
type shapeKey struct {
	write      bool
	table      string
	sizeClass  int8 // bits.Len64 of the call's bytes
	pieceClass int8 // bits.Len64 of the mean piece (0: unknown)
}

// shape is what was measured of one shape's calls.
type shape struct {
	cands []string // the table's choice first
	// how is, per candidate, how it runs its strategy (nil: as the
	// strategy would on its own).
	how []variant
	// perMiB holds, per candidate, the nanoseconds per MiB of its last
	// keptSamples timed calls, oldest first; first, of its first timed
	// call (0: none yet).
	perMiB [][]int64
	first  []int64
	// sampled is, per candidate, the call (counted in calls) that gave its
	// last sample.
	sampled []int
	calls   int // agreed calls of this shape so far
	best    int // the candidate kept once each was tried
	// trial is the candidate being tried, given the calls it ran so far
	// (trial == len(cands): every candidate was tried).
	trial, given int
	// retryAt is the call (counted in calls) where a candidate other than
	// best runs again; gap the calls until the one after; next the
	// candidate it will be.
	retryAt, gap, next int
	// soon is the candidate run again at the next call, its figure older
	// than the kept one's and now switchPercent faster (0: none; else
	// candidate+1).
	soon int
}

// newShape is a shape not measured yet.
func newShape(cands []string, how []variant) *shape {
	return &shape{cands: cands, how: how, perMiB: make([][]int64, len(cands)), gap: firstRetrial}
}

// variant is how a candidate runs its strategy.
type variant struct {
	aggs int // on the first aggs of the call's aggregators (0: on all)
	// noAffinity: two-phase on ROMIO's domains where it would draw
	// affinity domains (coll.Job.NoAffinityDomains).
	noAffinity bool
}

// timedCall is the last agreed call whose time the next entry records
// carry: the same on every rank.
type timedCall struct {
	shape *shape
	cand  int
	seq   int64
	bytes int64
}

// measuring is a file's measured choice.
type measuring struct {
	shapes  map[shapeKey]*shape
	pending timedCall
	// tookSeq and tookNs are this rank's time of its last timed call, for
	// its next entry record.
	tookSeq, tookNs int64
}

// reset forgets every measurement: new hints may make other strategies
// faster (cb_buffer_size, aggregators).
func (m *measuring) reset() { *m = measuring{} }

// measures reports whether the measured choice times a call of s: not
// where a hint, the call's kind or a rule with no alternative decides (a
// forced strategy or romio_cb_*=disable, I/O servers, the E10 cache, a
// nonblocking operation, calls that move nothing), nor for calls whose
// ranges do not interleave (independent I/O moves every byte once, with
// no exchange) unless collective buffering is enabled.
func (f *File) measures(s situation) bool {
	d := direction(s.write)
	switch {
	case !f.cfg.measure || f.cfg.strategy != hints.StrategyAuto || f.cfg.ioServers || f.cfg.noIndepRW,
		f.cached, f.opFile, s.bytes <= 0, f.cfg.cb[d] == hints.Disable:
		return false
	}
	return f.cfg.cb[d] == hints.Enable || coll.Interleaved(s.ranges)
}

// candidates lists the strategies the measured choice times for a shape
// the table gives to name, name first, and per candidate how it runs;
// made once per shape.
func (f *File) candidates(s situation, name string) ([]string, []variant) {
	pool := []string{hints.StrategyTwoPhase}
	switch {
	case s.nodes > 1 && len(s.ranges) > s.nodes:
		// TAM aggregates within nodes first: with one rank on each node
		// it is two-phase with an extra step.
		pool = append(pool, hints.StrategyTAM)
	case s.nodes == 1 && !s.striped:
		pool = append(pool, hints.StrategyDynamic)
	}
	if f.cfg.cb[direction(s.write)] != hints.Enable {
		pool = append(pool, hints.StrategyIndependent)
	}
	cands := []string{name}
	for _, p := range pool {
		if _, ok := coll.Lookup(p); ok && p != name {
			cands = append(cands, p)
		}
	}
	how := make([]variant, len(cands))
	i := slices.Index(cands, hints.StrategyTwoPhase)
	if k := f.fewerAggregators(s); k > 0 && i >= 0 {
		cands = slices.Insert(cands, i+1, hints.StrategyTwoPhase)
		how = slices.Insert(how, i+1, variant{aggs: k})
	}
	if f.affinityWrites(s) && i >= 0 {
		cands = slices.Insert(cands, i+1, hints.StrategyTwoPhase)
		how = slices.Insert(how, i+1, variant{noAffinity: true})
	}
	return cands, how
}

// affinityWrites reports whether two-phase would draw affinity domains
// for writes of s (twophase.Strategy.Rule): on several nodes, without
// striping or a collio_file_domains hint, on two aggregators or more.
// (Its plan may still fall back to ROMIO's domains; the candidate on them
// then runs what two-phase does.)
func (f *File) affinityWrites(s situation) bool {
	return s.write && s.nodes > 1 && !s.striped && f.cfg.fileDomains == hints.DomainsAuto && len(f.aggs) > 1
}

// fewerAggregators is how many aggregators the second two-phase candidate
// of a write runs on: half of one per node, where collio picks them on
// several nodes without striping, the volume rule does not already thin
// them, and each aggregator would write less than fewerAggregatorsBelow in
// the call (0: no such candidate). Larger shares already keep a node's
// link busy, and fewer aggregators then only leave links idle; reads
// showed no gain, only the trials' cost. The file's aggregators are
// ordered node round-robin, so the first k are on k nodes.
func (f *File) fewerAggregators(s situation) int {
	n := int64(len(f.aggs))
	if !s.write || s.nodes < 2 || s.striped || !f.autoAggregators() || f.cfg.bytesPerAgg > 0 || n < 2 || s.bytes >= n*fewerAggregatorsBelow {
		return 0
	}
	return int(n+1) / 2
}

// fewerAggregatorsBelow is the share of a call per aggregator under which
// two-phase on half of the aggregators is a candidate.
const fewerAggregatorsBelow = 256 << 10

// label names candidate i in reasons: its strategy, its aggregators
// where it runs on fewer than the call has, and its domains where it
// draws no affinity domains.
func (sh *shape) label(i int) string {
	l := sh.cands[i]
	switch k := sh.aggregators(i); {
	case k == 1:
		l += " on 1 aggregator"
	case k > 1:
		l = fmt.Sprintf("%s on %d aggregators", l, k)
	}
	if sh.noAffinity(i) {
		l += " without affinity domains"
	}
	return l
}

// labels lists every candidate's label.
func (sh *shape) labels() string {
	l := make([]string, len(sh.cands))
	for i := range l {
		l[i] = sh.label(i)
	}
	return strings.Join(l, ", ")
}

// aggregators is how many aggregators candidate i runs on (0: all the
// call has, also for a nil shape).
func (sh *shape) aggregators(i int) int {
	if sh == nil || sh.how == nil {
		return 0
	}
	return sh.how[i].aggs
}

// noAffinity reports whether candidate i draws ROMIO's domains where
// two-phase would draw affinity domains (false for a nil shape).
func (sh *shape) noAffinity(i int) bool {
	return sh != nil && sh.how != nil && sh.how[i].noAffinity
}

// keyOf is the shape of a call the table gave to name.
func keyOf(s situation, name string) shapeKey {
	k := shapeKey{write: s.write, table: name, sizeClass: int8(bits.Len64(uint64(s.bytes)))}
	if s.pieces > 0 {
		k.pieceClass = int8(bits.Len64(uint64(s.bytes / s.pieces)))
	}
	return k
}

// measuredChoice is the strategy for a call of s that the table gave to
// name for reason, and the reason extended by how it was chosen; as the
// table's where nothing is measured. Pure on what every rank shares.
func (f *File) measuredChoice(s situation, name, reason string) (string, string, *shape, int) {
	if !f.measures(s) {
		return name, reason, nil, 0
	}
	m := &f.measured
	key := keyOf(s, name)
	sh := m.shapes[key]
	if sh == nil {
		if len(m.shapes) >= maxShapes {
			return name, reason, nil, 0
		}
		if m.shapes == nil {
			m.shapes = make(map[shapeKey]*shape)
		}
		cands, how := f.candidates(s, name)
		sh = newShape(cands, how)
		m.shapes[key] = sh
	}
	if len(sh.cands) < 2 {
		return name, reason, nil, 0 // no other strategy is linked in
	}
	i, how := sh.pick()
	return sh.cands[i], reason + "; measured choice: " + how, sh, i
}

// pick is the candidate for the shape's next call, and how it was picked.
func (sh *shape) pick() (int, string) {
	n := sh.calls
	sh.calls++
	if sh.trying() {
		if sh.given == trialCalls || sh.given == 1 && sh.clearlySlower(sh.trial) {
			sh.trial, sh.given = sh.trial+1, 0
		}
		if sh.trying() {
			sh.given++
			return sh.trial, fmt.Sprintf("trying %s (up to %d timed calls of each of %s)", sh.label(sh.trial), trialCalls, sh.labels())
		}
		sh.retryAt = n + firstRetrial
	}
	switch {
	case sh.soon > 0:
		i := sh.soon - 1
		sh.soon = 0
		return i, fmt.Sprintf("trying %s again (%s slowed down past its older figure)", sh.label(i), sh.label(sh.best))
	case n >= sh.retryAt:
		sh.next = (sh.next + 1) % len(sh.cands)
		if sh.next == sh.best {
			sh.next = (sh.next + 1) % len(sh.cands)
		}
		sh.retryAt, sh.gap = n+sh.gap, min(2*sh.gap, lastRetrial)
		return sh.next, fmt.Sprintf("trying %s again (now and then, against %s)", sh.label(sh.next), sh.label(sh.best))
	}
	return sh.best, fmt.Sprintf("%s, the fastest of %s on this shape's timed calls", sh.label(sh.best), sh.labels())
}

// trying reports whether some candidate has not had its trial calls.
func (sh *shape) trying() bool { return sh.trial < len(sh.cands) }

// clearlySlower reports whether candidate i's first call was over
// slowerPercent per cent slower than another candidate's first call.
func (sh *shape) clearlySlower(i int) bool {
	if sh.first == nil || sh.first[i] == 0 {
		return false
	}
	x := sh.first[i]
	for j, y := range sh.first {
		if j != i && y > 0 && x*100 > y*(100+slowerPercent) {
			return true
		}
	}
	return false
}

// settledOn reports whether the shape's last call ran candidate i as
// the kept one, every candidate tried.
func (sh *shape) settledOn(i int) bool {
	return !sh.trying() && i == sh.best
}

// timing says that the call about to run, number seq, of bytes in all,
// is timed for candidate i of sh (nil: not timed).
func (m *measuring) timing(sh *shape, i int, seq, bytes int64) {
	m.pending = timedCall{}
	if sh != nil {
		m.pending = timedCall{shape: sh, cand: i, seq: seq, bytes: bytes}
	}
}

// took records this rank's time for call seq, for its next entry record.
func (m *measuring) took(seq, ns int64) { m.tookSeq, m.tookNs = seq, ns }

// observe takes the slowest rank's time of the pending call (ns < 0: some
// rank's record was of another call, or it failed there).
func (m *measuring) observe(ns int64) {
	p := m.pending
	m.pending = timedCall{}
	if p.shape == nil || ns < 0 || p.bytes <= 0 {
		return
	}
	p.shape.record(p.cand, int64(float64(ns)*(1<<20)/float64(p.bytes)))
}

// record adds a timed call of candidate i, of perMiB nanoseconds per MiB.
func (sh *shape) record(i int, perMiB int64) {
	if sh.first == nil {
		sh.first = make([]int64, len(sh.cands))
		sh.sampled = make([]int, len(sh.cands))
	}
	if sh.first[i] == 0 {
		sh.first[i] = max(perMiB, 1)
	}
	s := append(sh.perMiB[i], perMiB)
	if !sh.trying() && i != sh.best {
		s = []int64{perMiB} // a retrial: as recent as the kept figure
	}
	if len(s) > keptSamples {
		s = append([]int64(nil), s[len(s)-keptSamples:]...)
	}
	sh.perMiB[i] = s
	sh.sampled[i] = sh.calls
	switch {
	case sh.trying():
		sh.keepFastest()
	case i != sh.best:
		sh.keepFaster(i)
	default:
		sh.retrySoon()
	}
}

// figure is candidate i's time per MiB: the least of its kept samples
// (ok false: none yet).
func (sh *shape) figure(i int) (int64, bool) {
	s := sh.perMiB[i]
	if len(s) == 0 {
		return 0, false
	}
	least := s[0]
	for _, x := range s[1:] {
		least = min(least, x)
	}
	return least, true
}

// keepFastest makes the fastest measured candidate the kept one when it
// beats the kept one by switchPercent, or the kept one has no figure; for
// the trials, whose figures are all recent.
func (sh *shape) keepFastest() {
	fastest := -1
	var least int64
	for i := range sh.cands {
		if x, ok := sh.figure(i); ok && (fastest < 0 || x < least) {
			fastest, least = i, x
		}
	}
	if fastest >= 0 {
		sh.keepFaster(fastest)
	}
}

// keepFaster makes candidate i the kept one when its figure beats the
// kept one's by switchPercent, or the kept one has no figure.
func (sh *shape) keepFaster(i int) {
	x, ok := sh.figure(i)
	if !ok || i == sh.best {
		return
	}
	if kept, ok := sh.figure(sh.best); !ok || sh.beats(x, kept) {
		sh.best = i
	}
}

// beats reports whether figure x is switchPercent faster than kept.
func (sh *shape) beats(x, kept int64) bool { return x*100 <= kept*(100-switchPercent) }

// retrySoon runs again, at the next call, the candidate whose figure, older
// than the kept one's, now beats it by switchPercent (the fastest of
// those): the kept one slowed down, and only a recent figure can say
// whether the other is still faster.
func (sh *shape) retrySoon() {
	kept, ok := sh.figure(sh.best)
	if !ok || sh.soon > 0 {
		return
	}
	var least int64
	for j := range sh.cands {
		x, ok := sh.figure(j)
		if ok && j != sh.best && sh.calls-sh.sampled[j] > keptSamples && sh.beats(x, kept) && (sh.soon == 0 || x < least) {
			sh.soon, least = j+1, x
		}
	}
}

// kept is the strategy the shape of a call the table gave to name runs
// between retrials, once every candidate was tried; ok false otherwise.
// The background rechecks ask it: a measured choice of independent I/O
// holds as the table's would.
func (m *measuring) kept(s situation, name string) (string, bool) {
	sh := m.shapes[keyOf(s, name)]
	if sh == nil || sh.trying() {
		return "", false
	}
	return sh.cands[sh.best], true
}
