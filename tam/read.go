package tam

import (
	"errors"
	"io"
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// readScratch is the read side's per-round state beyond scratch.
type readScratch struct {
	// On a local aggregator: for each member, where each of its pieces
	// (in global aggregator order, then file order) sits in the bytes that
	// come back from the global aggregators: aggregator and position.
	where  [][]loc
	fromG  coll.Pool
	aggBuf [][]byte  // per global aggregator: its extents' bytes
	down   coll.Pool // a member's bytes, packed for sending
	recv   coll.Pool // a member's bytes when they cannot land in place
}

type loc struct {
	agg int32
	at  int64
}

func (r *run) read() (int64, error) {
	// As in twophase.Read: the caller may agree on the end of the file.
	var size int64 // unused where the caller counts
	if !r.j.EOF.Take() {
		var err error
		if size, err = r.fileSize(); err != nil {
			return 0, err
		}
	}
	st := &r.newStates()[0]
	for m := 0; m < r.rounds; m++ {
		if err := r.readRound(m, st); err != nil {
			return 0, err
		}
	}
	if r.io.Err != nil {
		return 0, r.io.Err
	}
	if r.j.EOF.Taken() {
		return r.j.Access.Size, nil
	}
	return r.j.Access.BytesBefore(size)
}

// fileSize has the first global aggregator learn the file size and
// broadcast it, so that ranks without the file know where it ends.
func (r *run) fileSize() (int64, error) {
	size, fileErr, err := coll.BroadcastFileSize(r.j.Comm, r.j.File, r.aggs[0])
	r.io.Fail(fileErr)
	return size, err
}

func (r *run) readRound(m int, st *gState) error {
	if err := r.cutAll(m); err != nil {
		return err
	}
	s := &r.sc
	comm.SetPhase(r.j.Comm, PhaseLayer1)
	// A member posts the receive of its data at once, in place when its
	// memory is contiguous and the round's bytes are one stretch of it.
	var down comm.Request
	var inPlace bool
	member := !r.isLocal() && r.memberActive(r.rank, m)
	if member {
		if bytes := r.memberBytes(); bytes > 0 {
			var buf []byte
			buf, inPlace = r.memberRecvBuf(bytes)
			var err error
			if down, err = r.j.Comm.Irecv(buf, r.bind[r.rank], tagDown); err != nil {
				return err
			}
		}
		if err := r.memberSend(false); err != nil {
			return err
		}
	}
	if r.isLocal() {
		if err := r.localGather(m, false); err != nil {
			return err
		}
		r.localMerge(st, false)
		r.locate()
	}
	comm.SetPhase(r.j.Comm, PhaseLayer2)
	if err := r.exchangeUp(m, st, false); err != nil {
		return err
	}
	if err := r.exchangeDown(m, st); err != nil {
		return err
	}
	comm.SetPhase(r.j.Comm, PhaseLayer1)
	if r.isLocal() {
		if err := r.localScatter(m); err != nil {
			return err
		}
	}
	comm.SetPhase(r.j.Comm, "")
	if down != nil {
		done := metrics.Timer(&r.stats.Shuffle)
		err := down.Wait()
		done()
		if err != nil {
			return err
		}
		r.got(down.Count(), &r.rep.Layer1Recv)
		if !inPlace {
			r.unpack(s.rd.recv.B[:down.Count()])
		}
	}
	return nil
}

// memberRecvBuf is where a member's bytes of the round arrive: in place
// in a contiguous user buffer when the pieces of all global aggregators,
// in that order, are one stretch of data positions; else a scratch buffer.
func (r *run) memberRecvBuf(bytes int64) ([]byte, bool) {
	s := &r.sc
	if r.contig {
		lo, next, ok := int64(-1), int64(-1), true
		for i := range r.aggs {
			if s.hi[i] <= s.lo[i] {
				continue
			}
			if lo < 0 {
				lo = s.lo[i]
			} else if s.lo[i] != next {
				ok = false
				break
			}
			next = s.hi[i]
		}
		if ok && lo >= 0 {
			return r.j.Access.Buf[lo:next], true
		}
	}
	return s.rd.recv.Get(bytes), false
}

// unpack copies a member's packed bytes of the round to its pieces.
func (r *run) unpack(b []byte) {
	s := &r.sc
	buf := r.j.Access.Buf
	for i := range r.aggs {
		for _, pc := range s.mine[i] {
			copy(buf[pc.Mem:pc.Mem+pc.N], b[:pc.N])
			b = b[pc.N:]
		}
	}
}

// locate records, after localMerge, where each member's pieces will sit
// in the bytes each global aggregator sends back: the extents' bytes come
// back to back, in list order.
func (r *run) locate() {
	s := &r.sc
	rd := &s.rd
	for len(rd.where) < len(r.members) {
		rd.where = append(rd.where, nil)
	}
	for k := range r.members {
		rd.where[k] = rd.where[k][:0]
	}
	// Pieces are located aggregator by aggregator, so each member's list
	// ends up in (aggregator, file) order, the order it sent them in.
	for i := range r.aggs {
		s.merged = coll.Merge(s.lists[i], nil, s.merged[:0])
		s.runs = findRuns(s.merged, s.runs[:0])
		var base int64
		// Entries of one member come out of the merge in its list order.
		for _, rn := range s.runs {
			for _, e := range s.merged[rn.first:rn.end] {
				rd.where[e.Src] = append(rd.where[e.Src], loc{agg: int32(i), at: base + e.Off - rn.off})
			}
			base += rn.n
		}
	}
}

// exchangeDown is layer 2 downwards: each global aggregator reads the span
// of what it was asked for and sends every local aggregator its extents'
// bytes, back to back; local aggregators receive them per global
// aggregator.
func (r *run) exchangeDown(m int, st *gState) error {
	s := &r.sc
	rd := &s.rd
	var recvs []comm.Request
	var gotFrom []int
	if r.isLocal() {
		me := r.localIdx[r.rank]
		var total int64
		for i, a := range r.aggs {
			if r.groupActive(me, i, m) && a != r.rank {
				total += s.up[i].bytes
			}
		}
		buf := rd.fromG.Get(total)
		rd.aggBuf = growData(rd.aggBuf, len(r.aggs))
		var at int64
		for i, a := range r.aggs {
			rd.aggBuf[i] = nil
			if !r.groupActive(me, i, m) || a == r.rank || s.up[i].bytes == 0 {
				continue
			}
			n := s.up[i].bytes
			rd.aggBuf[i] = buf[at : at+n]
			q, err := r.j.Comm.Irecv(rd.aggBuf[i], a, tagData)
			if err != nil {
				return err
			}
			recvs = append(recvs, q)
			gotFrom = append(gotFrom, int(n))
			at += n
		}
	}
	var sends []comm.Request
	if r.isGlobal() {
		back, res := r.readWindow(st)
		r.io.Record(res) // reads are not pipelined
		done := metrics.Timer(&r.stats.Shuffle)
		var at int64
		for q, g := range st.srcs {
			_, nb, _ := getCounts(st.hdr[countsWidth*q:])
			b := back[at : at+nb]
			at += nb
			if r.locals[g] == r.rank {
				rd.aggBuf[r.gIndex] = b
				continue
			}
			if nb == 0 {
				continue
			}
			req, err := r.j.Comm.Issend(b, r.locals[g], tagData)
			if err != nil {
				done()
				return err
			}
			r.sent(len(b))
			sends = append(sends, req)
		}
		done()
	}
	done := metrics.Timer(&r.stats.Shuffle)
	defer done()
	if err := comm.Waitall(recvs...); err != nil {
		return err
	}
	for _, n := range gotFrom {
		r.got(n, &r.rep.Layer2Recv)
	}
	return comm.Waitall(sends...)
}

// readWindow reads, on a global aggregator, the span of the extents its
// sources asked for and returns each source's bytes back to back (sources
// in order, each in its list order). On a file error the bytes are zeros
// and the error is in the result, so the exchange still completes.
func (r *run) readWindow(st *gState) ([]byte, coll.IOResult) {
	var res coll.IOResult
	var total int64
	for q := range st.srcs {
		_, nb, _ := getCounts(st.hdr[countsWidth*q:])
		total += nb
	}
	back := st.back.Get(total)
	st.merged = coll.Merge(st.lists, nil, st.merged[:0])
	if len(st.merged) == 0 {
		return back, res
	}
	lo, hi := st.merged[0].Off, int64(0)
	for _, e := range st.merged {
		hi = max(hi, e.End())
	}
	win := st.win.Get(hi - lo)
	start := time.Now()
	n, err := r.j.File.ReadAt(win, lo)
	res.IO += time.Since(start)
	if err != nil && !errors.Is(err, io.EOF) {
		clear(back)
		res.Err = err
		return back, res
	}
	if n < len(win) {
		r.j.EOF.Found(lo + int64(n))
	}
	clear(win[n:]) // past end of file
	var at int64
	for _, l := range st.lists {
		for _, x := range l {
			copy(back[at:at+x.N], win[x.Off-lo:])
			at += x.N
		}
	}
	return back, res
}

// localScatter sends each member its bytes of the round, packed in the
// order of its pieces, and copies the local aggregator's own to its buffer.
func (r *run) localScatter(m int) error {
	s := &r.sc
	rd := &s.rd
	defer metrics.Timer(&r.stats.Shuffle)()
	var total int64
	for k, mb := range r.members {
		if mb == r.rank || !s.active[k] {
			continue
		}
		total += s.payLenBytes(k, len(r.aggs))
	}
	out := rd.down.Get(total)[:0]
	var sends []comm.Request
	for k, mb := range r.members {
		if mb == r.rank {
			r.scatterOwn(k)
			continue
		}
		nb := s.payLenBytes(k, len(r.aggs))
		if !s.active[k] || nb == 0 {
			continue
		}
		start := len(out)
		lists := r.memberLists(k)
		for j, w := range rd.where[k] {
			x := lists[j]
			out = append(out, rd.aggBuf[w.agg][w.at:w.at+x.N]...)
		}
		q, err := r.j.Comm.Issend(out[start:], mb, tagDown)
		if err != nil {
			return err
		}
		r.sent(len(out) - start)
		sends = append(sends, q)
	}
	return comm.Waitall(sends...)
}

// payLenBytes is the data bytes member k announced in its sizes message.
func (s *scratch) payLenBytes(k, g int) int64 {
	var nb int64
	for i := 0; i < g; i++ {
		_, b, _ := getCounts(s.sizesIn[countsWidth*(g*k+i):])
		nb += b
	}
	return nb
}

// memberLists returns member k's pieces in the order it sent them
// (global aggregator, then file order).
func (r *run) memberLists(k int) []coll.Extent {
	s := &r.sc
	out := s.flat[:0]
	for i := range r.aggs {
		out = append(out, s.lists[i][k]...)
	}
	s.flat = out
	return out
}

// scatterOwn copies the local aggregator's own bytes into its buffer.
func (r *run) scatterOwn(k int) {
	s := &r.sc
	buf := r.j.Access.Buf
	j := 0
	for i := range r.aggs {
		for _, pc := range s.mine[i] {
			w := s.rd.where[k][j]
			copy(buf[pc.Mem:pc.Mem+pc.N], s.rd.aggBuf[w.agg][w.at:w.at+pc.N])
			j++
		}
	}
}
