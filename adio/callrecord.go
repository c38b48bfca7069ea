package adio

import (
	"encoding/binary"
	"fmt"

	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/ioerr"
)

// The first Allgather of every collective call on a file carries a call
// record of entryWords words: a transfer's entry record (entry.go), or a
// synchronizing call's record (meet). Whichever calls the ranks are in,
// they meet in that Allgather, see that they differ and return
// ErrNotSame. Records of different sizes, or a call that began without
// one, would instead match a later collective of another call, or hang.
// Every record begins with the same header:
const (
	headOp     = iota // the call: opCodes
	headSeq           // collective transfers on the file so far
	headDigest        // of their directions (stepCall)
	headFailed        // non-zero when the rank failed: its error's length in a synchronizing call's record
	headWords
)

// callHeader is the common head of a call record.
type callHeader struct {
	op, seq int64
	digest  uint64
	failed  uint64
}

func headerOf(all []byte, width, r int) callHeader {
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(all[width*r+8*i:]) }
	return callHeader{op: int64(w(headOp)), seq: int64(w(headSeq)), digest: w(headDigest), failed: w(headFailed)}
}

// opClose is the one call a rank cannot take back: its file is closed
// when it learns that the others are elsewhere.
var opClose = opCodes["close"]

// checkSameCall compares every rank's record header (records of width
// bytes in all) with rank 0's: ErrNotSame, worded from rank 0's side so
// that every rank returns the same text, when ranks are in different
// calls or made different collective transfers before this one. Every
// rank then takes rank 0's count and digest, so a difference is reported
// once. When some rank was closing, the file becomes unusable on every
// rank: the closing ones closed it, and a later close elsewhere closes
// only locally instead of waiting for them.
func (f *File) checkSameCall(all []byte, width int) error {
	n := f.comm.Size()
	first := headerOf(all, width, 0)
	var msg string
	for r := 1; r < n && msg == ""; r++ {
		h := headerOf(all, width, r)
		switch {
		case !sameCollective(h.op, first.op):
			msg = fmt.Sprintf("ranks are in different collective calls: rank 0 is in %s, rank %d in %s",
				opName(first.op), r, opName(h.op))
		case h.seq != first.seq:
			msg = fmt.Sprintf("ranks made different collective transfers on this file before this %s: rank 0 made %d, rank %d made %d",
				opName(first.op), first.seq, r, h.seq)
		case h.digest != first.digest:
			msg = fmt.Sprintf("ranks made different collective transfers on this file before this %s: rank 0 and rank %d made %d, in a different order of directions",
				opName(first.op), r, first.seq)
		}
	}
	if msg == "" {
		return nil
	}
	f.seq, f.digest = first.seq, first.digest
	err := &ioerr.Error{Class: ioerr.ErrNotSame, Op: opName(first.op), Path: f.path, Rank: -1,
		Msg: msg + " (every rank must make the same collective calls on a file in the same order)"}
	for r := range n {
		if headerOf(all, width, r).op == opClose {
			f.broken = err
			break
		}
	}
	return err
}

// meet is the agreement of a synchronizing call (or of a later step of
// any collective call): one Allgather, with a deadline
// (collio_collective_timeout), of this rank's call record carrying its
// outcome (err) and mine, at most entryWords-headWords words. Ranks in
// different calls get ErrNotSame; otherwise every rank returns the
// lowest failing rank's error. Rank r's words are all[r*len(mine):
// (r+1)*len(mine)], returned even when the call fails (nil when the
// Allgather did not complete); same is false when the ranks were not all in
// this call. A rank that never joins is a timeout, after which the file is
// unusable.
func (f *File) meet(op string, err error, mine []uint64) (all []uint64, same bool, _ error) {
	if len(mine) > entryWords-headWords {
		panic(fmt.Sprintf("adio: %s: a call record holds %d words, not %d", op, entryWords-headWords, len(mine)))
	}
	text := agree.Text(err)
	const width = 8 * entryWords
	n := f.comm.Size()
	if len(f.callAll) != width*(1+n) {
		f.callAll = make([]byte, width*(1+n))
	}
	send, gathered := f.callAll[:width], f.callAll[width:]
	clear(send)
	put := func(i int, w uint64) { binary.LittleEndian.PutUint64(send[8*i:], w) }
	put(headOp, uint64(opCodes[op]))
	put(headSeq, uint64(f.seq))
	put(headDigest, f.digest)
	put(headFailed, uint64(len(text)))
	for i, w := range mine {
		put(headWords+i, w)
	}
	if aerr := agree.AllgatherWithin(f.comm, send, gathered, f.cfg.collectiveTimeout, op); aerr != nil {
		f.broken = ioerr.Wrap(aerr, op, f.path, f.rank())
		return nil, false, f.broken
	}
	if k := len(mine); k > 0 {
		all = make([]uint64, k*n)
		for r := range n {
			for i := range k {
				all[k*r+i] = binary.LittleEndian.Uint64(gathered[width*r+8*(headWords+i):])
			}
		}
	}
	if serr := f.checkSameCall(gathered, width); serr != nil {
		return all, false, serr
	}
	return all, true, agree.Outcome(f.comm, err, text, func(r int) uint64 { return headerOf(gathered, width, r).failed })
}
