package tam

import (
	"fmt"
	"slices"
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// Phase names given to a counting communicator (comm.SetPhase), so that
// traffic can be told apart per layer.
const (
	PhaseLayer1 = "tam-intra" // ranks <-> local aggregators, within a node
	PhaseLayer2 = "tam-inter" // local aggregators <-> global aggregators
)

// scratch is the per-round working space of the layer-1 exchange and of
// the local aggregator's merge, reused from round to round.
type scratch struct {
	mine   [][]coll.Piece // this rank's pieces per global aggregator
	lo, hi []int64        // and the data positions they cover

	sizesOut []byte // counts per global aggregator: pieces, bytes, list bytes
	payOut   coll.Pool

	// On a local aggregator, per member (index into run.members).
	active  []bool
	sizesIn []byte  // counts per global aggregator per member
	payLen  []int64 // payload bytes each member sends
	payIn   coll.Pool
	own     coll.Pool         // own data packed (noncontiguous memory)
	lists   [][][]coll.Extent // [global aggregator][member] pieces
	data    [][][]byte        // [global aggregator][member] packed bytes (writes)
	merged  []coll.Entry
	runs    []stretch
	up      []upMsg // per global aggregator: what goes up in layer 2
	reqs    []comm.Request
	flat    []coll.Extent
	rd      readScratch
}

// upMsg is a local aggregator's layer-2 message to one global aggregator:
// ext extents of bytes bytes, their list encoded in list bytes, in its
// state's send buffer at [start, end).
type upMsg struct {
	ext, bytes, list int64
	start, end       int
}

// gState is one round's layer-2 state: the local aggregator's outgoing
// messages and what a global aggregator received, kept until the round's
// file I/O is done (with overlap, the next round uses the other state).
type gState struct {
	slot int // its pipeline slot

	// Buffers, from Job.Buffers when the caller keeps them: send holds a
	// local aggregator's layer-2 messages back to back, recv what a
	// global aggregator received, win its read-modify-write window, back
	// (reads) each source's bytes back to back.
	send, recv, win, back *coll.Pool

	srcs  []int // global aggregator: local aggregators heard from (indices into locals)
	hdr   []byte
	lists [][]coll.Extent // per source
	data  [][]byte        // per source (writes)

	merged []coll.Entry
	runs   []stretch
}

// newStates returns the two round states over the job's buffers.
func (r *run) newStates() *[2]gState {
	bufs := r.j.Buffers
	if bufs == nil {
		bufs = new(coll.Buffers)
	}
	var st [2]gState
	for k := range st {
		b := &bufs.Round[k]
		st[k] = gState{slot: k, send: &b.Send, recv: &b.Recv, win: &b.Window, back: &b.Back}
	}
	return &st
}

func (r *run) initScratch() {
	g, k := len(r.aggs), len(r.members)
	s := &r.sc
	s.mine = make([][]coll.Piece, g)
	s.lo, s.hi = make([]int64, g), make([]int64, g)
	s.sizesOut = make([]byte, countsWidth*g)
	s.up = make([]upMsg, g)
	if r.isLocal() {
		s.active = make([]bool, k)
		s.sizesIn = make([]byte, countsWidth*g*k)
		s.payLen = make([]int64, k)
		s.lists = make([][][]coll.Extent, g)
		s.data = make([][][]byte, g)
		for i := range s.lists {
			s.lists[i] = make([][]coll.Extent, k)
			s.data[i] = make([][]byte, k)
		}
	}
}

func (r *run) sent(n int) {
	r.stats.MsgsSent++
	r.stats.BytesSent += int64(n)
}

func (r *run) got(n int, layer *int64) {
	r.stats.MsgsRecv++
	r.stats.BytesRecv += int64(n)
	*layer++
}

func intersect(a, b coll.Range) coll.Range {
	return coll.Range{Start: max(a.Start, b.Start), End: min(a.End, b.End)}
}

// cutAll finds this rank's pieces in every global aggregator's window of
// round m (cut to its own access range, which both sides of layer 1 use
// to know whether it has anything to say).
func (r *run) cutAll(m int) error {
	defer metrics.Timer(&r.stats.Plan)()
	s := &r.sc
	mine := r.j.Ranges[r.rank]
	for i := range r.aggs {
		var err error
		s.mine[i], s.lo[i], s.hi[i], err = r.sl.Cut(intersect(r.window(i, m), mine), s.mine[i][:0])
		if err != nil {
			return err
		}
		r.rep.Pieces += int64(len(s.mine[i]))
	}
	return nil
}

// memberBytes is this rank's data bytes in the round, all global
// aggregators together.
func (r *run) memberBytes() (bytes int64) {
	s := &r.sc
	for i := range r.aggs {
		bytes += s.hi[i] - s.lo[i]
	}
	return bytes
}

// encodeLists encodes this rank's piece lists for the round, one per
// global aggregator, into the payload buffer, puts their counts in the
// sizes message and returns the total pieces.
func (r *run) encodeLists() (pieces int64) {
	s := &r.sc
	pay := s.payOut.B[:0]
	for i := range r.aggs {
		start := len(pay)
		var end int64
		for _, pc := range s.mine[i] {
			pay = coll.AppendRequest(pay, &end, pc.Off, pc.N)
		}
		np := int64(len(s.mine[i]))
		putCounts(s.sizesOut[countsWidth*i:], np, s.hi[i]-s.lo[i], int64(len(pay)-start))
		pieces += np
	}
	s.payOut.B = pay
	return pieces
}

// memberSend sends this rank's layer-1 messages for the round to its
// local aggregator, synchronously: the sizes, then one payload with the
// lists of all global aggregators followed (writes) by the data.
func (r *run) memberSend(withData bool) error {
	s := &r.sc
	pieces := r.encodeLists()
	to := r.bind[r.rank]
	done := metrics.Timer(&r.stats.ReqExchange)
	q1, err := r.j.Comm.Issend(s.sizesOut, to, tagSizes)
	if err != nil {
		done()
		return err
	}
	r.sent(len(s.sizesOut))
	var q2 comm.Request
	if pieces > 0 {
		pay := s.payOut.B
		if withData {
			buf := r.j.Access.Buf
			for i := range r.aggs {
				for _, pc := range s.mine[i] {
					pay = append(pay, buf[pc.Mem:pc.Mem+pc.N]...)
				}
			}
		}
		s.payOut.B = pay
		if q2, err = r.j.Comm.Issend(pay, to, tagPayload); err != nil {
			done()
			return err
		}
		r.sent(len(pay))
	}
	err = q1.Wait()
	done()
	if err != nil {
		return err
	}
	if q2 != nil {
		defer metrics.Timer(&r.stats.Shuffle)()
		return q2.Wait()
	}
	return nil
}

// localGather receives the round's layer-1 messages of the local
// aggregator's members and files their pieces (and data) per global
// aggregator, its own included.
func (r *run) localGather(m int, withData bool) error {
	s := &r.sc
	g := len(r.aggs)
	done := metrics.Timer(&r.stats.ReqExchange)
	reqs := s.reqs[:0]
	for k, mb := range r.members {
		s.active[k] = mb != r.rank && r.memberActive(mb, m)
		if !s.active[k] {
			continue
		}
		q, err := r.j.Comm.Irecv(s.sizesIn[countsWidth*g*k:countsWidth*g*(k+1)], mb, tagSizes)
		if err != nil {
			done()
			return err
		}
		reqs = append(reqs, q)
	}
	err := comm.Waitall(reqs...)
	done()
	if err != nil {
		return err
	}
	var total int64
	for k := range r.members {
		s.payLen[k] = 0
		if !s.active[k] {
			continue
		}
		r.got(countsWidth*g, &r.rep.Layer1Recv)
		var nl, nb int64
		for i := 0; i < g; i++ {
			_, b, l := getCounts(s.sizesIn[countsWidth*(g*k+i):])
			nl += l
			nb += b
		}
		s.payLen[k] = nl
		if withData {
			s.payLen[k] += nb
		}
		total += s.payLen[k]
	}
	buf := s.payIn.Get(total)
	done = metrics.Timer(&r.stats.Shuffle)
	reqs = reqs[:0]
	var at int64
	for k, mb := range r.members {
		if s.payLen[k] == 0 {
			continue
		}
		q, err := r.j.Comm.Irecv(buf[at:at+s.payLen[k]], mb, tagPayload)
		if err != nil {
			done()
			return err
		}
		reqs = append(reqs, q)
		at += s.payLen[k]
	}
	err = comm.Waitall(reqs...)
	s.reqs = reqs[:0]
	done()
	if err != nil {
		return err
	}
	// File every member's pieces per global aggregator.
	at = 0
	for k, mb := range r.members {
		for i := 0; i < g; i++ {
			s.lists[i][k], s.data[i][k] = s.lists[i][k][:0], nil
		}
		if mb == r.rank {
			r.fileOwn(k, withData)
			continue
		}
		if s.payLen[k] == 0 {
			continue
		}
		r.got(int(s.payLen[k]), &r.rep.Layer1Recv)
		b := buf[at : at+s.payLen[k]]
		at += s.payLen[k]
		var nl int64
		for i := 0; i < g; i++ {
			_, _, l := getCounts(s.sizesIn[countsWidth*(g*k+i):])
			nl += l
		}
		if nl > int64(len(b)) {
			return fmt.Errorf("tam: rank %d announced %d bytes of lists in a payload of %d", mb, nl, len(b))
		}
		lists, data := b[:nl], b[nl:]
		for i := 0; i < g; i++ {
			cnt, nb, l := getCounts(s.sizesIn[countsWidth*(g*k+i):])
			if l < 0 || l > int64(len(lists)) || withData && (nb < 0 || nb > int64(len(data))) {
				return fmt.Errorf("tam: rank %d's sizes do not match its payload", mb)
			}
			if s.lists[i][k], err = decodeList(lists[:l], int(cnt), nb, s.lists[i][k]); err != nil {
				return err
			}
			lists = lists[l:]
			if withData {
				s.data[i][k], data = data[:nb], data[nb:]
			}
		}
	}
	return nil
}

// fileOwn files the local aggregator's own pieces as member k.
func (r *run) fileOwn(k int, withData bool) {
	s := &r.sc
	buf := r.j.Access.Buf
	if withData && !r.contig {
		var n int64
		for i := range r.aggs {
			n += s.hi[i] - s.lo[i]
		}
		buf = s.own.Get(n)[:0]
	}
	for i := range r.aggs {
		s.lists[i][k] = slices.Grow(s.lists[i][k], len(s.mine[i]))
		for _, pc := range s.mine[i] {
			s.lists[i][k] = append(s.lists[i][k], coll.Extent{Off: pc.Off, N: pc.N})
		}
		if !withData {
			continue
		}
		if r.contig {
			s.data[i][k] = buf[s.lo[i]:s.hi[i]]
			continue
		}
		start := len(buf)
		for _, pc := range s.mine[i] {
			buf = append(buf, r.j.Access.Buf[pc.Mem:pc.Mem+pc.N]...)
		}
		s.data[i][k] = buf[start:]
	}
}

// exchangeUp is layer 2 upwards: each local aggregator sends every global
// aggregator whose window its group's span meets a header (extents,
// bytes) and, if it has extents, one message with the extent list and
// (writes) the data, all from st.send as laid out in sc.up; each global
// aggregator receives them into st, sources in local aggregator order.
func (r *run) exchangeUp(m int, st *gState, withData bool) error {
	s := &r.sc
	// Headers count as request exchange, the rest as shuffle.
	start := time.Now()
	headersDone := false
	defer func() {
		if !headersDone {
			r.stats.ReqExchange += time.Since(start)
		} else {
			r.stats.Shuffle += time.Since(start)
		}
	}()
	var recvs []comm.Request
	st.srcs = st.srcs[:0]
	if r.isGlobal() {
		for g := range r.locals {
			if r.groupActive(g, r.gIndex, m) {
				st.srcs = append(st.srcs, g)
			}
		}
		st.hdr = growBytes(st.hdr, countsWidth*len(st.srcs))
		for q, g := range st.srcs {
			if r.locals[g] == r.rank {
				continue
			}
			req, err := r.j.Comm.Irecv(st.hdr[countsWidth*q:countsWidth*(q+1)], r.locals[g], tagHeader)
			if err != nil {
				return err
			}
			recvs = append(recvs, req)
		}
	}
	var sends []comm.Request
	var hdrOut []byte
	if r.isLocal() {
		me := r.localIdx[r.rank]
		hdrOut = make([]byte, countsWidth*len(r.aggs))
		for i, a := range r.aggs {
			if !r.groupActive(me, i, m) || a == r.rank {
				continue
			}
			u := s.up[i]
			putCounts(hdrOut[countsWidth*i:], u.ext, u.bytes, u.list)
			req, err := r.j.Comm.Issend(hdrOut[countsWidth*i:countsWidth*(i+1)], a, tagHeader)
			if err != nil {
				return err
			}
			r.sent(countsWidth)
			sends = append(sends, req)
			if u.ext == 0 {
				continue
			}
			if req, err = r.j.Comm.Issend(st.send.B[u.start:u.end], a, tagUp); err != nil {
				return err
			}
			r.sent(u.end - u.start)
			if withData && r.nodeOf[a] != r.nodeOf[r.rank] {
				r.stats.CrossNodeBytes += u.bytes // the data; the list is metadata
			}
			sends = append(sends, req)
		}
	}
	if r.isGlobal() {
		if err := comm.Waitall(recvs...); err != nil {
			return err
		}
		r.stats.ReqExchange += time.Since(start)
		start, headersDone = time.Now(), true
		recvs = recvs[:0]
		// Payload sizes, then the payloads.
		var total int64
		for q, g := range st.srcs {
			if r.locals[g] == r.rank {
				u := s.up[r.gIndex]
				putCounts(st.hdr[countsWidth*q:], u.ext, u.bytes, u.list)
				continue
			}
			r.got(countsWidth, &r.rep.Layer2Recv)
			total += payloadLen(st.hdr[countsWidth*q:], withData)
		}
		buf := st.recv.Get(total)
		var at int64
		for q, g := range st.srcs {
			if r.locals[g] == r.rank {
				continue
			}
			n := payloadLen(st.hdr[countsWidth*q:], withData)
			if n == 0 {
				continue
			}
			req, err := r.j.Comm.Irecv(buf[at:at+n], r.locals[g], tagUp)
			if err != nil {
				return err
			}
			recvs = append(recvs, req)
			at += n
		}
		if err := comm.Waitall(recvs...); err != nil {
			return err
		}
		// Parse, sources in local aggregator order.
		st.lists = growLists(st.lists, len(st.srcs))
		st.data = growData(st.data, len(st.srcs))
		at = 0
		for q, g := range st.srcs {
			ext, nb, nl := getCounts(st.hdr[countsWidth*q:])
			var b []byte
			if r.locals[g] == r.rank {
				u := s.up[r.gIndex]
				b = st.send.B[u.start:u.end]
			} else {
				n := payloadLen(st.hdr[countsWidth*q:], withData)
				b = buf[at : at+n]
				at += n
				if n > 0 {
					r.got(int(n), &r.rep.Layer2Recv)
				}
			}
			if nl < 0 || nl > int64(len(b)) {
				return fmt.Errorf("tam: local aggregator %d announced a list of %d bytes in a message of %d", r.locals[g], nl, len(b))
			}
			var err error
			if st.lists[q], err = decodeList(b[:nl], int(ext), nb, st.lists[q][:0]); err != nil {
				return err
			}
			st.data[q] = nil
			if withData && ext > 0 {
				st.data[q] = b[nl:]
			}
		}
	}
	return comm.Waitall(sends...)
}

func payloadLen(hdr []byte, withData bool) int64 {
	ext, nb, nl := getCounts(hdr)
	if ext == 0 {
		return 0
	}
	if withData {
		return nl + nb
	}
	return nl
}

func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func growLists(l [][]coll.Extent, n int) [][]coll.Extent {
	for len(l) < n {
		l = append(l, nil)
	}
	return l[:n]
}

func growData(d [][]byte, n int) [][]byte {
	for len(d) < n {
		d = append(d, nil)
	}
	return d[:n]
}
