// Package agree makes the outcome of a collective call the same on every
// rank: the error one rank hit becomes the error all ranks return.
package agree

import (
	"encoding/binary"
	"fmt"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Errors makes a collective call's outcome the same on every rank: if any
// rank's err is non-nil, every rank returns the error of the lowest failing
// rank (same class, same text; that lowest failing rank keeps its own error value
// with its cause). All ranks must call it. If the agreement itself fails
// (the communicator broke), that error is returned, classed ioerr.ErrInternComm.
//
// Cost when nothing failed: one Allgather of 8 bytes per rank.
func Errors(c comm.Comm, err error) error {
	_, err = RecordChecked(c, err, nil, nil, nil)
	return err
}

// ErrorsChecked is Errors for a file's synchronizing calls: every rank
// also gives how many collective transfers it has made on the file (seq)
// and a digest of their directions. Where these differ, the ranks made
// different collective calls, some of which did not synchronize: every
// rank returns ErrNotSame, worded from rank 0's side so the text is the
// same everywhere. Cost when nothing failed: one Allgather of 24 bytes per
// rank. After a mismatch every rank takes rank 0's seq and digest, so it
// is reported once.
func ErrorsChecked(c comm.Comm, err error, seq *int64, digest *uint64) error {
	_, err = RecordChecked(c, err, seq, digest, nil)
	return err
}

// RecordChecked is ErrorsChecked carrying a record of words from every
// rank, as Record does, so a synchronizing call shares what it needs in
// its agreement's Allgather. Rank r's words are all[r*len(mine):
// (r+1)*len(mine)]; they are returned even when the call fails (nil only
// when the Allgather itself failed). seq and digest may be nil (Errors).
func RecordChecked(c comm.Comm, err error, seq *int64, digest *uint64, mine []uint64) (all []uint64, _ error) {
	var text []byte
	if err != nil {
		text = encode(err)
	}
	head := 1
	if seq != nil {
		head = 3
	}
	k := len(mine)
	width := 8 * (head + k)
	buf := make([]byte, width*(c.Size()+1))
	own, gathered := buf[:width], buf[width:]
	binary.LittleEndian.PutUint64(own[0:], uint64(len(text)))
	if seq != nil {
		binary.LittleEndian.PutUint64(own[8:], uint64(*seq))
		binary.LittleEndian.PutUint64(own[16:], *digest)
	}
	for i, w := range mine {
		binary.LittleEndian.PutUint64(own[8*(head+i):], w)
	}
	if cerr := Allgather(c, own, gathered); cerr != nil {
		return nil, &ioerr.Error{Class: ioerr.ErrInternComm, Op: "agree", Rank: c.Rank(), Err: cerr,
			Msg: fmt.Sprintf("agreeing on the outcome failed: %v (local outcome: %v)", cerr, err)}
	}
	word := func(r, i int) uint64 { return binary.LittleEndian.Uint64(gathered[width*r+8*i:]) }
	if k > 0 {
		all = make([]uint64, k*c.Size())
		for r := 0; r < c.Size(); r++ {
			for i := range k {
				all[k*r+i] = word(r, head+i)
			}
		}
	}
	for r := 1; seq != nil && r < c.Size(); r++ {
		if word(r, 1) != word(0, 1) || word(r, 2) != word(0, 2) {
			*seq, *digest = int64(word(0, 1)), word(0, 2)
			how := "the same number in a different order of directions"
			if word(r, 1) != word(0, 1) {
				how = fmt.Sprintf("%d", word(r, 1))
			}
			return all, &ioerr.Error{Class: ioerr.ErrNotSame, Rank: -1,
				Msg: fmt.Sprintf("ranks made different collective transfers on this file: rank 0 made %d, rank %d %s (every rank must make the same collective calls in the same order)",
					word(0, 1), r, how)}
		}
	}
	failed, n := -1, 0
	for r := 0; r < c.Size(); r++ {
		if l := int(word(r, 0)); l > 0 {
			failed, n = r, l
			break
		}
	}
	return all, spread(c, err, text, failed, n)
}

// spread gives every rank the error of rank failed (text of n bytes there),
// or nil if failed < 0.
func spread(c comm.Comm, err error, text []byte, failed, n int) error {
	if failed < 0 {
		return nil
	}
	buf := make([]byte, n)
	if c.Rank() == failed {
		copy(buf, text)
	}
	if cerr := c.Bcast(buf, failed); cerr != nil {
		return &ioerr.Error{Class: ioerr.ErrInternComm, Op: "agree", Rank: c.Rank(), Err: cerr,
			Msg: fmt.Sprintf("broadcasting rank %d's error failed: %v", failed, cerr)}
	}
	if c.Rank() == failed {
		return err
	}
	return decode(buf)
}

// Record is Errors carrying a record of words from every rank, so a
// collective call can share what it needs and agree on its outcome in the
// same Allgather. All ranks pass records of the same length; rank r's
// words are all[r*len(mine):(r+1)*len(mine)]. The words are returned even
// when the call fails (nil only when the agreement itself failed).
func Record(c comm.Comm, err error, mine []uint64) (all []uint64, _ error) {
	return RecordChecked(c, err, nil, nil, mine)
}

// encode packs an error's class code and text.
func encode(err error) []byte {
	s := err.Error()
	b := make([]byte, 2, 2+len(s))
	binary.LittleEndian.PutUint16(b, uint16(ioerr.Code(ioerr.ClassOf(err))))
	return append(b, s...)
}

func decode(b []byte) error {
	if len(b) < 2 {
		return ioerr.Remote(ioerr.ErrOther, "collio: malformed error from another rank")
	}
	return ioerr.Remote(ioerr.FromCode(int(binary.LittleEndian.Uint16(b))), string(b[2:]))
}
