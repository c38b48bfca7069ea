package tam

import (
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

func (r *run) write() error {
	st := r.newStates()
	defer r.io.Drain()
	if r.j.RMW && r.isGlobal() {
		r.oldEnd = coll.FileEnd(r.j.File) // before the first exchange
	}
	for m := 0; m < r.rounds; m++ {
		s := &st[m%2]
		r.io.Wait(s.slot) // its buffers are free again once round m-2 is written
		if err := r.writeRound(m, s); err != nil {
			return err
		}
	}
	r.io.Drain()
	return r.io.Err
}

func (r *run) writeRound(m int, st *gState) error {
	if err := r.cutAll(m); err != nil {
		return err
	}
	comm.SetPhase(r.j.Comm, PhaseLayer1)
	switch {
	case r.isLocal():
		if err := r.localGather(m, true); err != nil {
			return err
		}
		r.localMerge(st, true)
	case r.memberActive(r.rank, m):
		if err := r.memberSend(true); err != nil {
			return err
		}
	}
	comm.SetPhase(r.j.Comm, PhaseLayer2)
	if err := r.exchangeUp(m, st, true); err != nil {
		return err
	}
	comm.SetPhase(r.j.Comm, "")
	if r.isGlobal() && r.io.Err == nil {
		for _, l := range st.lists {
			if len(l) > 0 {
				r.io.Start(st.slot, func() coll.IOResult { return r.writeWindow(st) })
				break
			}
		}
	}
	return nil
}

// localMerge merges and coalesces the group's pieces per global
// aggregator and lays out the layer-2 messages in st.send: for each global
// aggregator the extent list, then (writes) the extents' bytes.
func (r *run) localMerge(st *gState, withData bool) {
	defer metrics.Timer(&r.stats.Plan)()
	s := &r.sc
	// One buffer for all the messages, sized for the most they can take:
	// grown by appends it would copy and first-touch them about twice.
	var most int64
	for i := range r.aggs {
		for k, l := range s.lists[i] {
			most += int64(len(l)) * coll.MaxRequestLen
			if withData {
				most += int64(len(s.data[i][k]))
			}
		}
	}
	out := st.send.Get(most)[:0]
	for i := range r.aggs {
		s.merged = coll.Merge(s.lists[i], nil, s.merged[:0])
		s.runs = findRuns(s.merged, s.runs[:0])
		u := upMsg{ext: int64(len(s.runs)), start: len(out)}
		var end int64
		for _, rn := range s.runs {
			out = coll.AppendRequest(out, &end, rn.off, rn.n)
			u.bytes += rn.n
		}
		u.list = int64(len(out) - u.start)
		if withData {
			out = coalesce(s.merged, s.runs, s.data[i], out)
		}
		u.end = len(out)
		s.up[i] = u
		if u.ext > 0 {
			r.rep.Extents += u.ext
		}
	}
	st.send.B = out
}

// writeWindow writes what a global aggregator received in one round, as
// twophase does: each contiguous run with one vectored write straight from
// the receive buffers (or, for tiny pieces, from one buffer they are
// copied into), or, when the window has holes and read-modify-write
// is on (or when extents of different local aggregators overlap), one
// read of the span, the extents laid over it in source order (the higher
// local aggregator wins), one write. It touches only st and the file, so
// it can run behind the next round's exchange.
func (r *run) writeWindow(st *gState) (res coll.IOResult) {
	st.merged = coll.Merge(st.lists, nil, st.merged[:0])
	st.runs = findRuns(st.merged, st.runs[:0])
	if len(st.runs) == 0 {
		return res
	}
	holes := len(st.runs) > 1
	overlaps := false
	for _, rn := range st.runs {
		overlaps = overlaps || rn.overlap
	}
	f := r.j.File
	if !overlaps && (!holes || !r.j.RMW) {
		start := time.Now()
		defer func() { res.IO += time.Since(start) }()
		var iov [][]byte
		for _, rn := range st.runs {
			es := st.merged[rn.first:rn.end]
			if coll.CopyPieces(es) {
				// One copy each into a buffer, as two-phase's aggregators.
				buf := st.win.Get(rn.n)
				at := 0
				for _, e := range es {
					at += copy(buf[at:], st.data[e.Src][e.At:e.At+e.N])
				}
				if _, res.Err = f.WriteAt(buf[:at], rn.off); res.Err != nil {
					return res
				}
				continue
			}
			iov = iov[:0]
			for _, e := range es {
				iov = append(iov, st.data[e.Src][e.At:e.At+e.N])
			}
			if _, res.Err = f.WriteV(iov, rn.off); res.Err != nil {
				return res
			}
		}
		return res
	}
	first, last := st.runs[0], st.runs[len(st.runs)-1]
	lo, hi := first.off, last.off+last.n
	if sortedLists(st.lists) {
		res.Err = r.writeChunks(st, lo, hi, holes, &res)
		return res
	}
	win := st.win.Get(hi - lo)
	if holes {
		start := time.Now()
		res.Err = r.oldEnd.Read(f, win, lo)
		res.RMW += time.Since(start)
		if res.Err != nil {
			return res
		}
	}
	for q, l := range st.lists {
		var at int64
		for _, x := range l {
			copy(win[x.Off-lo:], st.data[q][at:at+x.N])
			at += x.N
		}
	}
	start := time.Now()
	_, res.Err = f.WriteAt(win, lo)
	res.IO += time.Since(start)
	return res
}

// writeChunks read-modify-writes [lo, hi) a chunk at a time (Job.Chunk,
// as two-phase's aggregators): each chunk
// is read first where it has holes (up to the old end of file), the
// sources' extents are laid over it in source order, and it is written.
// Every list must be in file order without overlaps (sortedLists).
func (r *run) writeChunks(st *gState, lo, hi int64, holes bool, res *coll.IOResult) error {
	f := r.j.File
	chunk := r.j.Chunk(r.global.Stripe)
	win := st.win.Get(min(hi-lo, chunk))
	next := make([]int, len(st.lists)) // each list's first extent not yet laid down whole
	at := make([]int64, len(st.lists)) // where that extent's data starts
	for clo := lo; clo < hi; {
		chi := coll.ChunkEnd(clo, hi, chunk)
		w := win[:chi-clo]
		if holes {
			start := time.Now()
			err := r.oldEnd.Read(f, w, clo)
			res.RMW += time.Since(start)
			if err != nil {
				return err
			}
		}
		for q, l := range st.lists {
			for next[q] < len(l) && l[next[q]].Off < chi {
				x := l[next[q]]
				if a, b := max(x.Off, clo), min(x.End(), chi); a < b {
					copy(w[a-clo:b-clo], st.data[q][at[q]+a-x.Off:])
				}
				if x.End() > chi {
					break // its rest goes to the next chunk
				}
				at[q] += x.N
				next[q]++
			}
		}
		start := time.Now()
		_, err := f.WriteAt(w, clo)
		res.IO += time.Since(start)
		if err != nil {
			return err
		}
		clo = chi
	}
	return nil
}

// sortedLists reports whether every list is in file order without
// overlaps, as the local aggregators' merged runs are.
func sortedLists(lists [][]coll.Extent) bool {
	for _, l := range lists {
		for k := 1; k < len(l); k++ {
			if l[k].Off < l[k-1].End() {
				return false
			}
		}
	}
	return true
}
