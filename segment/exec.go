package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// maxGap is the largest hole a read runs through (into a scratch buffer)
// rather than starting a new read call, as OMPIO's posix fbtl does with
// fbtl_posix_max_gap_size.
const maxGap = 4096

// cycleFor is the cycle object of cycle c: two alternating ones with
// overlap, one without.
func (r *run) cycleFor(c int64) *cycle {
	if r.o.Overlap {
		return &r.cyc[c&1]
	}
	return &r.cyc[0]
}

// prepare plans a cycle and says where each member's bytes go: slots of
// the cycle buffer, in member order, or for the aggregator's own
// contiguous buffer the user buffer itself. For writes it also packs the
// aggregator's own noncontiguous data.
func (r *run) prepare(cy *cycle) {
	done := metrics.Timer(&r.stats.Plan)
	r.plan.plan(cy)
	done()
	self := r.mem.contiguous()
	var need int64
	for m, k := range cy.counts {
		if m != r.me || !self {
			need += k
		}
	}
	if int64(cap(cy.buf)) < need {
		cy.buf = make([]byte, need)
	}
	var at int64
	for m, k := range cy.counts {
		switch {
		case k == 0:
		case m == r.me && self:
			cy.chunks[m] = r.mem.slice(k)
		default:
			cy.chunks[m] = cy.buf[at : at+k : at+k]
			at += k
			if m == r.me && r.write {
				r.keepLocal(r.mem.move(cy.chunks[m], false))
			}
		}
	}
}

func (r *run) keepLocal(err error) {
	if r.local == nil {
		r.local = err
	}
}

// startIO runs the file I/O of a cycle: in the background with overlap
// (at most one at a time), else at once. After a file error no more I/O is
// done; reads then deliver zeros.
func (r *run) startIO(cy *cycle, fn func(*cycle) error) {
	if r.io.Err != nil {
		if !r.write {
			cy.zero()
		}
		return
	}
	slot := 0
	if cy == &r.cyc[1] {
		slot = 1
	}
	r.io.Start(slot, func() coll.IOResult {
		t := time.Now()
		err := fn(cy)
		return coll.IOResult{Err: err, IO: time.Since(t)}
	})
}

// waitIO waits for the background I/O, if any.
func (r *run) waitIO() { r.io.Drain() }

func (cy *cycle) zero() {
	for _, ch := range cy.chunks {
		clear(ch)
	}
}

func (r *run) leaderWrite() error {
	defer r.waitIO()
	for c := range r.cycles {
		cy := r.cycleFor(c)
		r.prepare(cy)
		if err := r.exchangeWrite(cy); err != nil {
			return err
		}
		r.waitIO()
		r.startIO(cy, r.writeCycle)
	}
	return nil
}

// exchangeWrite tells each member of a dynamic cycle its count and
// receives every member's bytes into its slot.
func (r *run) exchangeWrite(cy *cycle) error {
	var counts, data []comm.Request
	want := make([]int64, 0, len(cy.counts))
	for m, k := range cy.counts {
		if k == 0 || m == r.me {
			continue
		}
		if r.o.Dynamic {
			b := r.cnt[8*m : 8*m+8]
			binary.LittleEndian.PutUint64(b, uint64(k))
			q, err := r.c.Isend(b, m, tagCount)
			if err != nil {
				return err
			}
			counts = append(counts, q)
			r.sent(8)
		}
		q, err := r.c.Irecv(cy.chunks[m], m, tagData)
		if err != nil {
			return err
		}
		data = append(data, q)
		want = append(want, k)
		r.recvd(int(k))
	}
	t := time.Now()
	err := comm.Waitall(counts...)
	r.stats.ReqExchange += time.Since(t)
	if err != nil {
		return err
	}
	defer metrics.Timer(&r.stats.Shuffle)()
	if err := comm.Waitall(data...); err != nil {
		return err
	}
	for i, q := range data {
		if int64(q.Count()) != want[i] {
			return fmt.Errorf("segment: a member sent %d bytes, %d expected", q.Count(), want[i])
		}
	}
	return nil
}

// writeCycle writes a cycle's visible pieces, one vectored write per
// contiguous file run, under an exclusive lock of the cycle's span in
// atomic mode.
func (r *run) writeCycle(cy *cycle) error {
	lo, hi := int64(-1), int64(-1)
	for _, s := range cy.segs {
		if !s.hide {
			if lo < 0 {
				lo = s.off
			}
			hi = max(hi, s.off+s.n)
		}
	}
	if lo < 0 {
		return nil
	}
	f := r.j.File
	if r.j.Atomic {
		if err := f.Lock(lo, hi-lo, true); err != nil {
			return err
		}
		defer f.Unlock(lo, hi-lo)
	}
	iov := cy.iov[:0]
	var runStart, runEnd int64
	for _, s := range cy.segs {
		if s.hide {
			continue
		}
		if len(iov) > 0 && s.off != runEnd {
			if _, err := f.WriteV(iov, runStart); err != nil {
				return err
			}
			iov = iov[:0]
		}
		if len(iov) == 0 {
			runStart = s.off
		}
		iov = append(iov, cy.chunks[s.m][s.at:s.at+s.n])
		runEnd = s.off + s.n
	}
	_, err := f.WriteV(iov, runStart)
	cy.iov = iov[:0]
	return err
}

func (r *run) leaderRead() error {
	defer r.waitIO()
	if r.cycles == 0 {
		return nil
	}
	r.prepare(r.cycleFor(0))
	r.startIO(r.cycleFor(0), r.readCycle)
	for c := range r.cycles {
		cur := r.cycleFor(c)
		r.waitIO()
		more := c+1 < r.cycles
		if more && r.o.Overlap { // read ahead while this cycle is sent
			r.prepare(r.cycleFor(c + 1))
			r.startIO(r.cycleFor(c+1), r.readCycle)
		}
		if err := r.sendRead(cur); err != nil {
			return err
		}
		if more && !r.o.Overlap {
			r.prepare(r.cycleFor(c + 1))
			r.startIO(r.cycleFor(c+1), r.readCycle)
		}
	}
	return nil
}

// sendRead sends each member its bytes of a cycle (and unpacks the
// aggregator's own when its memory is noncontiguous).
func (r *run) sendRead(cy *cycle) error {
	var reqs []comm.Request
	for m, k := range cy.counts {
		switch {
		case k == 0:
		case m == r.me:
			if !r.mem.contiguous() {
				r.keepLocal(r.mem.move(cy.chunks[m], true))
			}
		default:
			q, err := r.c.Isend(cy.chunks[m], m, tagData)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
			r.sent(int(k))
		}
	}
	defer metrics.Timer(&r.stats.Shuffle)()
	return comm.Waitall(reqs...)
}

// readCycle reads a cycle's pieces into the members' slots: one vectored
// read per run of pieces whose gaps are at most maxGap bytes (gap bytes
// land in a scratch buffer), under a shared lock in atomic mode. Bytes past
// end of file read as zeros; on an error the whole cycle reads as zeros.
func (r *run) readCycle(cy *cycle) error {
	if len(cy.segs) == 0 {
		return nil
	}
	lo, hi := cy.segs[0].off, int64(0)
	for _, s := range cy.segs {
		hi = max(hi, s.off+s.n)
	}
	f := r.j.File
	if r.j.Atomic {
		if err := f.Lock(lo, hi-lo, false); err != nil {
			cy.zero()
			return err
		}
		defer f.Unlock(lo, hi-lo)
	}
	iov := cy.iov[:0]
	var runStart, runEnd int64
	flush := func() error {
		n, err := f.ReadV(iov, runStart)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for _, b := range iov { // zeros past end of file
			if n >= len(b) {
				n -= len(b)
				continue
			}
			clear(b[n:])
			n = 0
		}
		return nil
	}
	for _, s := range cy.segs {
		if len(iov) > 0 {
			gap := s.off - runEnd
			if gap < 0 || gap > maxGap {
				if err := flush(); err != nil {
					cy.zero()
					return err
				}
				iov = iov[:0]
			} else if gap > 0 {
				iov = append(iov, r.scratch[:gap])
				runEnd += gap
			}
		}
		if len(iov) == 0 {
			runStart, runEnd = s.off, s.off
		}
		iov = append(iov, cy.chunks[s.m][s.at:s.at+s.n])
		runEnd += s.n
	}
	err := flush()
	cy.iov = iov[:0]
	if err != nil {
		cy.zero()
	}
	return err
}

// memberWrite sends this rank's data to the aggregator: in each cycle the
// count the aggregator asks for (dynamic) or the next share (static).
func (r *run) memberWrite() error {
	limit := r.share
	if r.o.Dynamic {
		limit = r.j.BufSize
	}
	var tmp []byte
	if r.bytes > 0 && !r.mem.contiguous() {
		tmp = make([]byte, min(limit, r.bytes))
	}
	var cnt [8]byte
	for sent := int64(0); sent < r.bytes; {
		k := min(r.share, r.bytes-sent)
		if r.o.Dynamic {
			t := time.Now()
			q, err := r.c.Irecv(cnt[:], r.leader, tagCount)
			if err == nil {
				err = q.Wait()
			}
			r.stats.ReqExchange += time.Since(t)
			if err != nil {
				return err
			}
			r.recvd(8)
			k = int64(binary.LittleEndian.Uint64(cnt[:]))
			if k <= 0 || k > r.bytes-sent || k > limit {
				return fmt.Errorf("segment: aggregator asked for %d bytes with %d left", k, r.bytes-sent)
			}
		}
		var data []byte
		if r.mem.contiguous() {
			data = r.mem.slice(k)
		} else {
			data = tmp[:k]
			r.keepLocal(r.mem.move(data, false))
		}
		t := time.Now()
		q, err := r.c.Isend(data, r.leader, tagData)
		if err == nil {
			err = q.Wait()
		}
		r.stats.Shuffle += time.Since(t)
		if err != nil {
			return err
		}
		r.sent(int(k))
		sent += k
	}
	return nil
}

// memberRead receives this rank's data from the aggregator, cycle by
// cycle (a contiguous buffer in place), until all of it has arrived.
func (r *run) memberRead() error {
	limit := r.share
	if r.o.Dynamic {
		limit = r.j.BufSize
	}
	var tmp []byte
	if r.bytes > 0 && !r.mem.contiguous() {
		tmp = make([]byte, min(limit, r.bytes))
	}
	for got := int64(0); got < r.bytes; {
		n := min(limit, r.bytes-got)
		var dst []byte
		if r.mem.contiguous() {
			dst = r.mem.buf[got : got+n]
		} else {
			dst = tmp[:n]
		}
		t := time.Now()
		q, err := r.c.Irecv(dst, r.leader, tagData)
		if err == nil {
			err = q.Wait()
		}
		r.stats.Shuffle += time.Since(t)
		if err != nil {
			return err
		}
		k := int64(q.Count())
		if k <= 0 || !r.o.Dynamic && k != n {
			return fmt.Errorf("segment: aggregator sent %d bytes, %d expected", k, n)
		}
		r.recvd(int(k))
		if !r.mem.contiguous() {
			r.keepLocal(r.mem.move(dst[:k], true))
		}
		got += k
	}
	return nil
}
