package twophase

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// engine runs the rounds of one collective call on one rank.
type engine struct {
	j        *coll.Job
	rule     DomainRule
	rank     int
	size     int
	aggs     []int // the aggregators taking part, in domain order
	domains  []coll.Range
	domainOf []int // domainOf[rank] = the domain that rank aggregates, or -1
	rounds   int
	// window appends to buf the file ranges aggregator i handles in round
	// m: one range, or several with affinity domains.
	window func(i, m int, buf []coll.Range) []coll.Range
	wbuf   []coll.Range
	// local: with affinity domains, every rank's data lies in its own
	// domain, so the rounds skip the exchange (planAffinity).
	local bool
	// own: the domains are each rank's own blocks (own.go); windows are
	// never read-modify-written, so a rank writes only its own bytes.
	own   bool
	sl    *coll.Slicer
	stats *metrics.Call

	// Two round states: with overlap, the file I/O of one round runs in a
	// goroutine while the next round is exchanged in the other state.
	st [2]roundState

	// Exchange bookkeeping, used only by the calling goroutine.
	countsSend, countsRecv []byte
	inline                 int // bytes of a request list carried in its counts record (inlineWidth)
	scounts, sdispls       []int
	rcounts, rdispls       []int
	metaSend, metaRecv     *coll.Pool

	// io runs the rounds' file I/O (overlapped or not) and keeps this
	// rank's first file error; rounds continue so peers never hang.
	io coll.Pipeline
	// held: own-mode runs whose data stays in the caller's buffer, kept
	// to move with later rounds' in one batch (held.go).
	held driver.Held
	// oldEnd: where the file ended when the call began, so that
	// read-modify-write reads no holes past it.
	oldEnd coll.OldEnd
}

// roundState is what one round needs from its request exchange until its
// file I/O is done.
type roundState struct {
	// This rank's pieces in the round, per domain, the data range [lo,
	// hi) (relative to the access) they lie in and their bytes n (less
	// than hi-lo when a window of several ranges leaves gaps in it).
	mine      [][]coll.Piece
	lo, hi, n []int64
	// inPlace: the user's buffer is contiguous and no domain's data has
	// gaps, so each aggregator's part is one slice of it.
	inPlace bool
	// win is this rank's own window in the round, when it aggregates.
	win []coll.Range
	// On aggregators: each source rank's (offset, length) list and bytes.
	src      [][]coll.Extent
	srcBytes []int64
	sorted   []coll.Entry // the requested pieces, by file offset
	merge    coll.Merger
	starts   []int64 // where each source's data starts in the exchange buffer

	// Buffers reused from round to round, and from call to call when the
	// caller keeps a Buffers (a fresh zeroed allocation per round costs as
	// much as the copy it holds).
	send, recv, window *coll.Pool
	// An aggregator's own data for the round is not passed through the
	// exchange: self is its part of the send buffer (or of the user's
	// contiguous buffer) and selfAt where it would sit in recv.
	self   []byte
	selfAt int64
}

func newEngine(j *coll.Job, rule DomainRule) (*engine, error) {
	n := j.Comm.Size()
	if err := j.Check(n); err != nil {
		return nil, fmt.Errorf("twophase: %w", err)
	}
	e := &engine{j: j, rule: rule, rank: j.Comm.Rank(), size: n, stats: j.Stats, held: driver.Held{Limit: heldBufs}}
	if e.stats == nil {
		e.stats = &metrics.Call{}
	}
	e.io.Stats = e.stats
	span, ok := coll.Span(j.Ranges)
	if !ok {
		return e, nil // nothing to do anywhere
	}
	e.sl = coll.NewSlicer(j.Access)
	if err := e.plan(span); err != nil {
		return nil, err
	}
	e.domainOf = aggIndex(e.aggs, n)
	// Without an exchange there is nothing to hide the I/O behind either.
	e.io.Overlap = j.OverlapsRounds(e.rounds) && !e.local
	bufs := j.Buffers
	if bufs == nil {
		bufs = new(coll.Buffers)
	}
	e.metaSend, e.metaRecv = &bufs.MetaSend, &bufs.MetaRecv
	for k := range e.st {
		st := &e.st[k]
		st.send, st.recv, st.window = &bufs.Round[k].Send, &bufs.Round[k].Recv, &bufs.Round[k].Window
		st.mine = make([][]coll.Piece, len(e.domains))
		st.lo = make([]int64, len(e.domains))
		st.hi = make([]int64, len(e.domains))
		st.n = make([]int64, len(e.domains))
		st.src = make([][]coll.Extent, n)
		st.srcBytes = make([]int64, n)
		st.starts = make([]int64, n)
	}
	e.inline = inlineWidth(n)
	e.countsSend = make([]byte, e.blockWidth()*n)
	e.countsRecv = make([]byte, e.blockWidth()*n)
	e.scounts, e.sdispls = make([]int, n), make([]int, n)
	e.rcounts, e.rdispls = make([]int, n), make([]int, n)
	e.stats.Rounds = e.rounds
	e.stats.Aggregators = len(e.aggs)
	e.stats.Aggregator = e.aggregator()
	return e, nil
}

func (e *engine) aggregator() bool { return e.domainOf != nil && e.domainOf[e.rank] >= 0 }

// plan chooses the file domains and the windows of each round.
//
// Stripe-cyclic (DomainRule.StripeCount > 0, as ROMIO's Lustre driver): only
// ActiveAggregators of the aggregators take part, aggregator i owns every
// stripe whose index is i modulo their number, and handles one of its
// stripes per round, so no two aggregators ever share a stripe (a lock
// unit). Affinity (DomainRule.AffinityBlock > 0, see affinity.go): blocks go to
// the aggregator with most data in them, whole blocks per round.
// Otherwise (ROMIO's generic rule): the span is split into equal domains,
// their inner edges moved to stripe boundaries when Stripe > 0, handled
// BufSize bytes per round.
func (e *engine) plan(span coll.Range) error {
	j := e.j
	d := PlanDomains(j, e.rule, span)
	e.aggs, e.domains, e.rounds = d.Aggs, d.Domains, d.Rounds
	e.window = func(i, m int, buf []coll.Range) []coll.Range {
		if w := d.Window(i, m); !w.Empty() {
			buf = append(buf, w)
		}
		return buf
	}
	if d.Striped {
		e.stats.Domains = "stripe_cyclic"
		return nil
	}
	if e.planOwn(span) {
		return nil
	}
	var note string
	if b := e.rule.AffinityBlock; b > 0 && b <= j.BufSize && len(e.aggs) > 1 && e.size < 1<<20 && j.TotalBytes > 0 {
		if ok, err := e.planAffinity(span, b); ok || err != nil {
			return err
		}
		note = " (" + e.stats.Domains + ")"
	}
	e.stats.Domains = "even" + note
	if e.rule.Stripe > 0 {
		e.stats.Domains = "aligned" + note
	}
	return nil
}

// planAffinity finds each block's owner (every rank counts its own bytes
// per block; one Allreduce picks the largest) and assigns the blocks. It
// reports false, leaving the plan to ROMIO's rule, when more than half of
// the call's bytes would still cross ranks: scattered blocks mean more and
// smaller writes, worth it only where most data stays home (ROMIO's
// domains move (n-1)/n of the data of n aggregators on most layouts).
func (e *engine) planAffinity(span coll.Range, block int64) (bool, error) {
	j := e.j
	done := metrics.Timer(&e.stats.Plan)
	nb := Blocks(span, block)
	mine := make([]int64, nb+1) // and a last element: 1 if counting failed here
	countErr := blockBytes(e.sl, j, span, block, mine[:nb], e.rank)
	if countErr != nil {
		mine[nb] = 1
	}
	done()
	// Every rank takes part even after an error, and all learn of it, so
	// none goes on to rounds the others left.
	stop := metrics.Timer(&e.stats.ReqExchange)
	keys := make([]int64, len(mine))
	err := j.Comm.AllreduceInt64(mine, keys, comm.OpMax)
	stop()
	if err == nil && countErr == nil && keys[nb] != 0 {
		err = fmt.Errorf("twophase: another rank could not count its bytes per block")
	}
	if err = errors.Join(countErr, err); err != nil {
		return false, err
	}
	mine, keys = mine[:nb], keys[:nb]
	done = metrics.Timer(&e.stats.Plan)
	ap, ok := PlanAffinity(span, block, keys, e.aggs, e.rule.NodeOf, e.size, j.TotalBytes)
	done()
	if !ok {
		e.stats.Domains = fmt.Sprintf("affinity would move %d of the %d bytes", ap.Moved, j.TotalBytes)
		return false, nil
	}
	doms, kept := ap.Doms, ap.Count
	perRound := int(j.BufSize / block)
	// A round more is a synchronization of every rank more, which the
	// bytes kept home rarely pay for (on one node each is one memory
	// copy); with no exchange at all there is nothing to synchronize.
	rounds := AffinityRounds(doms, perRound)
	if ap.Home < j.TotalBytes && rounds > e.rounds {
		e.stats.Domains = fmt.Sprintf("affinity would take %d rounds, not %d", rounds, e.rounds)
		return false, nil
	}
	e.domains = make([]coll.Range, len(e.aggs))
	e.rounds = rounds
	e.window = func(i, m int, buf []coll.Range) []coll.Range {
		return AffinityWindow(buf, span, block, doms[i], m, perRound)
	}
	size := sizeText(block)
	e.stats.Domains = fmt.Sprintf("affinity: %d of %d blocks of %s at their main rank, %d of %d bytes cross ranks",
		kept.Kept, kept.WithData, size, ap.Moved, j.TotalBytes)
	if ap.ByNode {
		e.stats.Domains = fmt.Sprintf("affinity by node: %d of %d blocks of %s at an aggregator on their main rank's node; of %d bytes %d stay at their rank, %d more on its node",
			kept.Kept, kept.WithData, size, j.TotalBytes, ap.Home, ap.Kept-ap.Home)
	}
	// All data is at its writer: the rounds run without any exchange.
	if e.local = ap.Home == j.TotalBytes; e.local {
		e.stats.Domains = fmt.Sprintf("affinity: %d of %d blocks of %s at their main rank, no exchange",
			kept.Kept, kept.WithData, size)
		e.checkLocal(mine, doms, aggIndex(e.aggs, e.size)[e.rank])
	}
	return true, nil
}

// planOwn runs the call on each rank's own blocks when the entry record
// showed that they tile the span and every rank with data aggregates. The
// verdict comes from what every rank gathered, so all ranks reach it
// alike; the rounds then exchange nothing, and each rank runs as many as
// its own data needs.
func (e *engine) planOwn(span coll.Range) bool {
	j := e.j
	grid := e.rule.OwnGrid
	if grid <= 0 || grid > j.BufSize || len(j.Own) != e.size || !OwnBlocksTile(span, grid, j.Own) {
		return false
	}
	aggOf := aggIndex(e.aggs, e.size)
	for r, o := range j.Own {
		if o.Count > 0 && aggOf[r] < 0 {
			return false
		}
	}
	doms := make([][]int32, len(e.aggs))
	mine := aggOf[e.rank]
	if mine >= 0 {
		base := span.Start / grid
		blocks := make([]int32, 0, j.Own[e.rank].Count)
		if err := eachOwnBlock(j.Access, grid, func(b int64) { blocks = append(blocks, int32(b-base)) }); err != nil {
			// Counted before the call, so this cannot fail unless the
			// caller's report was not this access's: the rank's error,
			// its data untouched, the others unaffected.
			e.io.Fail(fmt.Errorf("twophase: rank %d: its own blocks: %w", e.rank, err))
			blocks = blocks[:0]
		}
		doms[mine] = blocks
	}
	perRound := int(j.BufSize / grid)
	e.domains = make([]coll.Range, len(e.aggs))
	e.rounds = 0
	if mine >= 0 {
		e.rounds = AffinityRounds(doms[mine:mine+1], perRound)
	}
	e.window = func(i, m int, buf []coll.Range) []coll.Range {
		return AffinityWindow(buf, span, grid, doms[i], m, perRound)
	}
	e.local, e.own = true, true
	e.stats.Domains = fmt.Sprintf("own blocks: every rank's data in blocks of %s no other rank touches, no exchange", sizeText(grid))
	return true
}

// aggIndex maps each of n ranks to its index in aggs, or -1.
func aggIndex(aggs []int, n int) []int {
	idx := make([]int, n)
	for r := range idx {
		idx[r] = -1
	}
	for i, a := range aggs {
		idx[a] = i
	}
	return idx
}

// sizeText writes a block size in KiB when it is a whole number of them.
func sizeText(b int64) string {
	if b%1024 == 0 {
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

// checkLocal makes sure, before rounds that skip the exchange, that all
// of this rank's data lies in its own domain. It can only fail if
// Job.TotalBytes undercounts the call's bytes; the data left out is then
// this rank's error (agreed on by the caller), never a silent loss, and
// the rank still takes part in every round.
func (e *engine) checkLocal(mine []int64, doms [][]int32, myDomain int) {
	own := make([]bool, len(mine))
	if i := myDomain; i >= 0 {
		for _, b := range doms[i] {
			own[b] = true
		}
	}
	for b, k := range mine {
		if k > 0 && !own[b] {
			e.io.Fail(fmt.Errorf("twophase: rank %d has %d bytes in block %d of another aggregator, yet the call's %d bytes were counted at their writers (Job.TotalBytes too small?)",
				e.rank, k>>20, b, e.j.TotalBytes))
			return
		}
	}
}

// requests finds this rank's pieces in every aggregator's window of round
// m and sends their (offset, length) lists to the aggregators: an
// Alltoall of (pieces, bytes) per peer, then an Alltoallv of the lists,
// unless they all fit in the Alltoall's blocks (inlineWidth).
func (e *engine) requests(m int, st *roundState) error {
	comm.SetPhase(e.j.Comm, PhaseRequests)
	done := metrics.Timer(&e.stats.Plan)
	st.inPlace = e.j.Access.MemContiguous()
	st.win = st.win[:0]
	for i := range e.domains {
		if e.local && e.aggs[i] != e.rank {
			// planAffinity found no data of this rank there.
			st.mine[i], st.lo[i], st.hi[i], st.n[i] = st.mine[i][:0], 0, 0, 0
			continue
		}
		e.wbuf = e.window(i, m, e.wbuf[:0])
		if e.aggs[i] == e.rank {
			st.win = append(st.win, e.wbuf...)
		}
		var err error
		st.mine[i], st.lo[i], st.hi[i], st.n[i], err = e.sl.In(e.wbuf, st.mine[i][:0])
		if err != nil {
			done()
			return err
		}
		if st.n[i] != st.hi[i]-st.lo[i] {
			st.inPlace = false
		}
	}
	done()
	if e.local {
		e.requestsLocal(st)
		return nil
	}
	defer metrics.Timer(&e.stats.ReqExchange)()

	// The lists, in peer rank order, compact (coll.AppendRequest). Each
	// peer's counts record carries its list too when every list of every
	// rank fits there (inlineWidth): then the Alltoallv is skipped.
	var pieces int
	for i := range st.mine {
		pieces += len(st.mine[i])
	}
	send := e.metaSend.Get(int64(4 * pieces))[:0] // most pieces take 2-4 bytes
	clear(e.countsSend)
	w := e.blockWidth()
	overflow := false
	for p := 0; p < e.size; p++ {
		e.sdispls[p] = len(send)
		if i := e.domainOf[p]; i >= 0 {
			var end int64
			for _, pc := range st.mine[i] {
				send = coll.AppendRequest(send, &end, pc.Off, pc.N)
			}
			binary.LittleEndian.PutUint64(e.countsSend[w*p:], uint64(len(st.mine[i])))
			binary.LittleEndian.PutUint64(e.countsSend[w*p+8:], uint64(st.n[i]))
		}
		e.scounts[p] = len(send) - e.sdispls[p]
		binary.LittleEndian.PutUint64(e.countsSend[w*p+16:], uint64(e.scounts[p]))
		if e.scounts[p] > e.inline {
			overflow = true
		} else {
			copy(e.countsSend[w*p+countsWidth+flagWidth:], send[e.sdispls[p]:])
		}
	}
	if overflow {
		for p := 0; p < e.size; p++ {
			e.countsSend[w*p+countsWidth] = 1
		}
	}
	e.metaSend.Keep(send)
	if err := e.j.Comm.Alltoall(e.countsSend, e.countsRecv, w); err != nil {
		return err
	}
	e.count(e.countsSend, e.countsRecv, w)
	total := 0
	for s := 0; s < e.size; s++ {
		st.srcBytes[s] = int64(binary.LittleEndian.Uint64(e.countsRecv[w*s+8:]))
		e.rdispls[s], e.rcounts[s] = total, int(binary.LittleEndian.Uint64(e.countsRecv[w*s+16:]))
		total += e.rcounts[s]
		if e.countsRecv[w*s+countsWidth] != 0 {
			overflow = true // every rank sees every sender's flag: all agree
		}
	}
	var recv []byte
	if overflow {
		recv = e.metaRecv.Get(int64(total))
		if err := e.j.Comm.Alltoallv(send, e.scounts, e.sdispls, recv, e.rcounts, e.rdispls); err != nil {
			return err
		}
		e.countV(e.scounts, e.rcounts)
	}
	for s := 0; s < e.size; s++ {
		np := int(binary.LittleEndian.Uint64(e.countsRecv[w*s:]))
		var enc []byte
		if overflow {
			enc = recv[e.rdispls[s] : e.rdispls[s]+e.rcounts[s]]
		} else {
			if e.rcounts[s] > e.inline {
				return fmt.Errorf("twophase: rank %d's request list of %d bytes was not sent (%d fit)", s, e.rcounts[s], e.inline)
			}
			at := w*s + countsWidth + flagWidth
			enc = e.countsRecv[at : at+e.rcounts[s]]
		}
		list, err := coll.DecodeRequests(enc, np, st.src[s][:0])
		if err != nil {
			return fmt.Errorf("twophase: rank %d's request list: %v", s, err)
		}
		st.src[s] = list
		var sum int64
		for _, x := range list {
			sum += x.N
		}
		if sum != st.srcBytes[s] {
			return fmt.Errorf("twophase: rank %d announced %d bytes but listed %d", s, st.srcBytes[s], sum)
		}
	}
	if e.aggregator() {
		st.sorted = e.entries(st)
	}
	return nil
}

// requestsLocal is requests without the exchange: an aggregator's
// requests are its own pieces, and nobody else's.
func (e *engine) requestsLocal(st *roundState) {
	for s := range st.src {
		st.src[s], st.srcBytes[s] = st.src[s][:0], 0
	}
	i := e.domainOf[e.rank]
	if i < 0 {
		return
	}
	for _, pc := range st.mine[i] {
		st.src[e.rank] = append(st.src[e.rank], coll.Extent{Off: pc.Off, N: pc.N})
	}
	st.srcBytes[e.rank] = st.n[i]
	st.sorted = e.entries(st)
}

// count records the messages of an Alltoall with n-byte blocks: one per
// peer whose block is not all zeros (what a pairwise exchange would send
// with nothing to say skipped), self excluded.
func (e *engine) count(send, recv []byte, n int) {
	for p := 0; p < e.size; p++ {
		if p == e.rank {
			continue
		}
		if slices.ContainsFunc(send[p*n:(p+1)*n], func(b byte) bool { return b != 0 }) {
			e.stats.MsgsSent++
			e.stats.BytesSent += int64(n)
		}
		if slices.ContainsFunc(recv[p*n:(p+1)*n], func(b byte) bool { return b != 0 }) {
			e.stats.MsgsRecv++
			e.stats.BytesRecv += int64(n)
		}
	}
}

// countV records the messages of an Alltoallv: one per peer with data.
func (e *engine) countV(scounts, rcounts []int) {
	for p := 0; p < e.size; p++ {
		if p == e.rank {
			continue
		}
		if scounts[p] > 0 {
			e.stats.MsgsSent++
			e.stats.BytesSent += int64(scounts[p])
		}
		if rcounts[p] > 0 {
			e.stats.MsgsRecv++
			e.stats.BytesRecv += int64(rcounts[p])
		}
	}
}

// countCross adds the data bytes sent to ranks on other nodes (with
// DomainRule.NodeOf) to the call's record.
func (e *engine) countCross(scounts []int) {
	nodeOf := e.rule.NodeOf
	if len(nodeOf) != e.size {
		return
	}
	for p, n := range scounts {
		if p != e.rank && n > 0 && nodeOf[p] != nodeOf[e.rank] {
			e.stats.CrossNodeBytes += int64(n)
		}
	}
}

// entries returns the round's requested pieces sorted by file offset
// (ties in rank order), each with its source and where its data sits in
// the exchange buffer: sources' data packed in rank order, each source's
// in its list's order. Each list is already sorted: a k-way merge.
func (e *engine) entries(st *roundState) []coll.Entry {
	var at int64
	for s := 0; s < e.size; s++ {
		st.starts[s] = at
		at += st.srcBytes[s]
	}
	// The state's previous round is done with its list: reuse it (All
	// sizes it for the pieces).
	st.merge.Reset(st.src, st.starts)
	return st.merge.All(st.sorted[:0])
}

// shape describes the sorted pieces of a window: the file range they span,
// whether they leave holes and whether any overlap.
func shape(sorted []coll.Entry) (span coll.Range, holes, overlaps bool) {
	span = coll.Range{Start: sorted[0].Off, End: sorted[0].Off}
	for _, x := range sorted {
		switch {
		case x.Off > span.End:
			holes = true
		case x.Off < span.End:
			overlaps = true
		}
		span.End = max(span.End, x.End())
	}
	return span, holes, overlaps
}

// cutBefore splits pieces sorted by offset into those starting before end
// and the rest: the pieces of one window range, whose end is given.
func cutBefore(sorted []coll.Entry, end int64) (head, rest []coll.Entry) {
	k := 0
	for k < len(sorted) && sorted[k].Off < end {
		k++
	}
	return sorted[:k], sorted[k:]
}

func since(d *time.Duration, start time.Time) { *d += time.Since(start) }

// slot is the pipeline slot of a round state.
func (e *engine) slot(st *roundState) int {
	if st == &e.st[1] {
		return 1
	}
	return 0
}

// countsWidth is the bytes per peer of the requests' counts: pieces, data
// bytes, and the bytes of the encoded list. A flag byte (padded to
// flagWidth) and room for an inlined list follow in each peer's block of
// the Alltoall.
const (
	countsWidth = 24
	flagWidth   = 8
)

// inlineBudget bounds a rank's blocks in the requests' Alltoall; within
// it each peer's block carries up to maxInline bytes of request list. A
// call whose lists all fit (a few pieces per rank and aggregator) then
// exchanges them in that Alltoall and makes no Alltoallv: one collective
// fewer per round, which across nodes costs more than the bytes.
const (
	inlineBudget = 16 << 10
	maxInline    = 1 << 10
)

// inlineWidth is the room for an inlined list in each of n peers' blocks
// (0: lists always go by Alltoallv). It depends on n alone, so that every
// rank's blocks are alike.
func inlineWidth(n int) int {
	k := min(maxInline, inlineBudget/max(n, 1)-countsWidth-flagWidth)
	if k < 16 {
		return 0
	}
	return k &^ 7
}

// blockWidth is the bytes per peer of the requests' Alltoall.
func (e *engine) blockWidth() int { return countsWidth + flagWidth + e.inline }

// Phase names given to a counting communicator (comm.SetPhase), so that
// the scale model can time the two exchanges of a round apart.
const (
	PhaseRequests = "twophase-requests" // sizes and (offset, length) lists to the aggregators
	PhaseData     = "twophase-data"     // the data between ranks and aggregators
)
