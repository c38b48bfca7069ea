package adio

import (
	"encoding/binary"

	"github.com/collio/collio/internal/coll"
)

// entryRecord is what each rank tells the others at the start of a
// collective transfer, in enter's one Allgather.
type entryRecord struct {
	op  int64 // opCodes: the explicit-offset and file-pointer forms of a direction meet
	seq int64 // collective transfers on the file so far, this one included
	// rng is the file range the rank accesses ([0, 0) when it has none).
	rng coll.Range
	// bad: a bad argument on this rank, or an error owed by an earlier
	// call: every rank then returns the lowest failing rank's error.
	bad bool
	// pending is the range of this rank's E10 cache not copied yet.
	pending coll.Range
	// fellBack: this rank's E10 cache gave up after open.
	fellBack bool
	bytes    int64
	// own is the rank's own-blocks report (Count -1: none).
	own coll.OwnBlocks
	// maySieve: this rank's write may read-modify-write (so the others'
	// independent writes need locks where ranges interleave).
	maySieve bool
	digest   uint64 // the directions of the file's transfers so far
	pieces   int64  // estimated file pieces (layout.PiecesOf)
	// tookSeq and tookNs: how long this rank's last timed call, number
	// tookSeq, took (the measured choice, measure.go).
	tookSeq, tookNs int64
}

// entryWords is the size of an encoded entryRecord in 64-bit words.
const entryWords = 16

func (e *entryRecord) encode(b []byte) {
	// The header (callrecord.go) first.
	w := [entryWords]uint64{
		headOp: uint64(e.op), headSeq: uint64(e.seq), headDigest: e.digest, headFailed: flag(e.bad),
		uint64(e.rng.Start), uint64(e.rng.End),
		uint64(e.pending.Start), uint64(e.pending.End), uint64(e.bytes), flag(e.fellBack),
		uint64(e.own.Count), e.own.Hash, flag(e.maySieve), uint64(e.pieces),
		uint64(e.tookSeq), uint64(e.tookNs),
	}
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
}

func decodeEntry(b []byte) entryRecord {
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	i := func(k int) int64 { return int64(w(k)) }
	return entryRecord{
		op: i(headOp), seq: i(headSeq), digest: w(headDigest), bad: w(headFailed) != 0,
		rng:     coll.Range{Start: i(4), End: i(5)},
		pending: coll.Range{Start: i(6), End: i(7)}, bytes: i(8), fellBack: w(9) != 0,
		own: coll.OwnBlocks{Count: i(10), Hash: w(11)}, maySieve: w(12) != 0, pieces: i(13),
		tookSeq: i(14), tookNs: i(15),
	}
}

func flag(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
