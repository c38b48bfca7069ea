// Package segment runs collective file I/O with OMPIO's two segmentation
// algorithms (Chaarawi and Gabriel's "dynamic" and "static" fcoll
// components), an alternative to the ROMIO-style file domains of package
// twophase.
//
// The ranks are split into groups of consecutive ranks, one per aggregator
// (Groups). Each group works alone on its own communicator: there is no
// global round count. Every member sends its whole (offset, length) piece
// list to the aggregator once; the aggregator then runs cycles of at most
// cb_buffer_size bytes:
//
//   - dynamic segmentation: a cycle is the next BufSize bytes of the
//     group's pieces merged in file order, whoever owns them (a piece is
//     cut at the cycle edge). The aggregator tells each member how many
//     bytes of its data stream the cycle takes, one count per member with
//     data in the cycle. The aggregator's buffer is always full; members
//     progress unevenly.
//   - static segmentation: in each cycle every member contributes the next
//     share = BufSize / group size bytes of its own data stream (at least
//     1, so a group larger than BufSize moves a byte per member), so
//     members need no per-cycle counts and progress evenly; the cycle's
//     file pieces are whatever those bytes map to.
//
// Members send their bytes in their own data order (a contiguous buffer in
// place, a noncontiguous memory layout packed), the aggregator sorts the
// cycle's pieces by file offset and writes each contiguous file run with one
// vectored write straight from the cycle buffer: holes are not written, so
// there is never a read-modify-write. Reads mirror this: the aggregator
// reads each run with one vectored read into the members' slots of the
// cycle buffer, reading through gaps of at most maxGap bytes into a scratch
// buffer to save calls, then sends each member its bytes.
//
// With overlap, the aggregator has two cycle buffers: the write of cycle i
// (for reads, the read-ahead of cycle i+1) runs in a goroutine while the
// next cycle is exchanged.
//
// When members of one group write the same bytes, the highest rank wins,
// as if the ranks had written independently in rank order (the same rule
// as twophase); overlapping writes by ranks of different groups land in an
// unspecified order.
package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/collio/collio/internal/coll"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
)

// Phase names given to a counting communicator (comm.SetPhase), so that
// the scale model can time the metadata and the cycles apart.
const (
	PhaseRequests = "segment-requests" // piece lists to the aggregator, the cycle count back
	PhaseData     = "segment-data"     // the cycles' counts and data
)

// Options selects the variant.
type Options struct {
	Dynamic bool // dynamic segmentation; false: static
	Overlap bool // two cycle buffers, file I/O overlapped with the exchange
}

// IOTime splits an aggregator's file I/O time (zero on other ranks).
type IOTime struct {
	Busy time.Duration // time the file calls took; also added to Stats.IO
	Wait time.Duration // the part this rank waited for, not hidden by overlap; added to Stats.IOWait
}

// Hidden is the I/O time that overlap hid behind the exchange.
func (t IOTime) Hidden() time.Duration { return max(0, t.Busy-t.Wait) }

// Write runs a collective write with dynamic or static segmentation, the
// file I/O overlapped with the exchange as j.Overlap says. Same contract
// as twophase.Write: every rank of j.Comm calls it with the same
// Aggregators and BufSize; it returns this rank's error; file errors
// never stop the exchange. j.Ranges is only used to skip an all-empty
// call.
func Write(j *coll.Job, dynamic bool) error {
	_, err := WriteWith(j, Options{Dynamic: dynamic, Overlap: j.Overlap})
	return err
}

// Read runs a collective read; it returns the number of bytes read, fewer
// than the access size only where the access extends past end of file.
func Read(j *coll.Job, dynamic bool) (int64, error) {
	n, _, err := ReadWith(j, Options{Dynamic: dynamic, Overlap: j.Overlap})
	return n, err
}

// WriteWith is Write with the variant given in full (o.Overlap in place
// of j.Overlap), that also reports the I/O time split.
func WriteWith(j *coll.Job, o Options) (IOTime, error) {
	r, err := start(j, o, true)
	if r == nil || err != nil {
		return IOTime{}, err
	}
	err = r.body()
	return r.t, r.finish(err)
}

// ReadWith is Read with the variant given in full, that also reports the
// I/O time split.
func ReadWith(j *coll.Job, o Options) (int64, IOTime, error) {
	r, err := start(j, o, false)
	if r == nil || err != nil {
		return 0, IOTime{}, err
	}
	err = r.body()
	if err = r.finish(err); err != nil {
		return 0, r.t, err
	}
	// Bytes of the access before end of file: pieces are in data order.
	var n int64
	for _, p := range r.mine {
		n += min(p.N, max(0, r.fileSize-p.Off))
	}
	return n, r.t, nil
}

// run is one rank's state during one call.
type run struct {
	j      *coll.Job
	o      Options
	write  bool
	stats  *metrics.Call
	c      comm.Comm // the group's communicator
	me     int       // this rank in the group
	leader int       // the aggregator's rank in the group
	share  int64     // static share per member per cycle

	mem   *memCursor
	mine  []coll.Extent // this rank's file pieces, in data order
	bytes int64         // data bytes this rank contributes (0 after a local error)
	local error         // this rank's own error (view or buffer); it still takes part

	cycles   int64
	fileSize int64 // reads: the file size the aggregator saw

	// Aggregator only.
	lists   [][]coll.Extent
	hide    [][]bool // which pieces of lists are hidden (hideOverlaps)
	totals  []int64
	plan    planner
	abort   error // malformed metadata: the group stops together
	cyc     [2]cycle
	cnt     []byte // count messages, 8 bytes per member
	scratch []byte // reads: target of gap bytes
	// io runs the cycles' file I/O (overlapped or not) into ioTime and
	// keeps the first file error; the exchange goes on.
	io     coll.Pipeline
	ioTime metrics.Call
	t      IOTime
}

// cycle is one cycle at the aggregator.
type cycle struct {
	segs   []seg    // the cycle's pieces in file order
	counts []int64  // bytes of each member's stream in the cycle
	chunks [][]byte // where each member's bytes are
	buf    []byte   // the cycle buffer
	iov    [][]byte
}

func (cy *cycle) reset() {
	cy.segs = cy.segs[:0]
	clear(cy.counts)
	clear(cy.chunks)
}

func (r *run) isLeader() bool { return r.me == r.leader }

func (r *run) sent(n int) {
	r.stats.MsgsSent++
	r.stats.BytesSent += int64(n)
}

func (r *run) recvd(n int) {
	r.stats.MsgsRecv++
	r.stats.BytesRecv += int64(n)
}

// start validates the job (the same verdict on every rank), forms the
// groups and exchanges the metadata. A nil run means nothing to do.
func start(j *coll.Job, o Options, write bool) (*run, error) {
	n, rank := j.Comm.Size(), j.Comm.Rank()
	if err := checkAggs(n, j.Aggregators); err != nil {
		return nil, err
	}
	if err := j.CheckBufSize(); err != nil {
		return nil, fmt.Errorf("segment: %w", err)
	}
	stats := j.Stats
	if stats == nil {
		stats = &metrics.Call{}
	}
	group, leaders := Groups(n, j.Aggregators)
	g := group[rank]
	stats.Aggregators = len(leaders)
	stats.Aggregator = rank == leaders[g]
	stats.Rounds = 0
	if len(j.Ranges) == n {
		if _, ok := coll.Span(j.Ranges); !ok {
			return nil, nil
		}
	}
	c, err := j.Comm.Split(g, rank)
	if err != nil {
		return nil, err
	}
	first := rank - c.Rank()
	r := &run{j: j, o: o, write: write, stats: stats, c: c, me: c.Rank(), leader: leaders[g] - first}
	r.share = max(1, j.BufSize/int64(c.Size()))
	r.io = coll.Pipeline{Overlap: o.Overlap, Stats: &r.ioTime}

	done := metrics.Timer(&stats.Plan)
	r.mem, r.local = newMemCursor(j.Access)
	if r.local == nil {
		r.mine, r.local = filePieces(j.Access)
	}
	if r.local != nil {
		r.mine = nil
	} else {
		r.bytes = j.Access.Size
	}
	done()
	comm.SetPhase(j.Comm, PhaseRequests)
	if err := r.metadata(); err != nil {
		return nil, r.finish(err)
	}
	comm.SetPhase(j.Comm, PhaseData)
	return r, nil
}

// metadata gathers the piece lists at the aggregator, which plans the
// cycles and broadcasts their count (and for reads the file size).
func (r *run) metadata() error {
	done := metrics.Timer(&r.stats.ReqExchange)
	defer done()
	if err := r.gatherLists(); err != nil {
		return err
	}
	var b [24]byte
	if r.isLeader() {
		if r.j.File == nil {
			r.io.Fail(errors.New("segment: aggregator without an open file"))
		} else if !r.write {
			size, err := r.j.File.Size()
			if err != nil {
				r.io.Fail(err)
				size = 0
			}
			r.fileSize = size
		}
		if r.abort == nil {
			r.setup()
		}
		binary.LittleEndian.PutUint64(b[:], uint64(r.cycles))
		binary.LittleEndian.PutUint64(b[8:], uint64(r.fileSize))
		if r.abort != nil {
			b[16] = 1
		}
		r.stats.MsgsSent += int64(r.c.Size() - 1)
		r.stats.BytesSent += int64(len(b) * (r.c.Size() - 1))
	} else {
		r.recvd(len(b))
	}
	if err := r.c.Bcast(b[:], r.leader); err != nil {
		return err
	}
	r.cycles = int64(binary.LittleEndian.Uint64(b[:]))
	r.fileSize = int64(binary.LittleEndian.Uint64(b[8:]))
	r.stats.Rounds = int(r.cycles)
	if b[16] != 0 && r.abort == nil {
		r.abort = errors.New("segment: the aggregator received malformed metadata; group stopped")
	}
	return nil
}

// setup plans the aggregator's cycles.
func (r *run) setup() {
	done := metrics.Timer(&r.stats.Plan)
	defer done()
	if r.write {
		r.hide = hideOverlaps(r.lists)
	}
	n := len(r.lists)
	if r.o.Dynamic {
		r.plan = newDynamicPlan(r.lists, r.hide, r.j.BufSize)
		r.cycles = dynamicCycles(r.totals, r.j.BufSize)
	} else {
		r.plan = &staticPlan{lists: r.lists, hide: r.hide, next: make([]int, n), used: make([]int64, n), share: r.share}
		r.cycles = staticCycles(r.totals, r.share)
	}
	for i := range r.cyc {
		r.cyc[i].counts = make([]int64, n)
		r.cyc[i].chunks = make([][]byte, n)
	}
	r.cnt = make([]byte, 8*n)
	if !r.write {
		r.scratch = make([]byte, maxGap)
	}
}

// body runs the cycles.
func (r *run) body() error {
	if r.abort != nil {
		return nil
	}
	switch {
	case r.isLeader() && r.write:
		return r.leaderWrite()
	case r.isLeader():
		return r.leaderRead()
	case r.write:
		return r.memberWrite()
	default:
		return r.memberRead()
	}
}

// finish frees the group communicator and picks this rank's error: a
// communication error first, then its own, then file errors.
func (r *run) finish(err error) error {
	comm.SetPhase(r.j.Comm, "")
	r.t = IOTime{Busy: r.ioTime.IO, Wait: r.ioTime.IOWait}
	r.stats.IO += r.t.Busy
	r.stats.IOWait += r.t.Wait
	if ferr := r.c.Free(); err == nil {
		err = ferr
	}
	for _, e := range []error{err, r.local, r.io.Err, r.abort} {
		if e != nil {
			return e
		}
	}
	return nil
}
