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
	_, err = recordWords(c, err, nil)
	return err
}

// recordWords is Record: one Allgather of each rank's error length and
// words, then Outcome.
func recordWords(c comm.Comm, err error, mine []uint64) (all []uint64, _ error) {
	text := Text(err)
	k := len(mine)
	width := 8 * (1 + k)
	buf := make([]byte, width*(c.Size()+1))
	own, gathered := buf[:width], buf[width:]
	binary.LittleEndian.PutUint64(own[0:], uint64(len(text)))
	for i, w := range mine {
		binary.LittleEndian.PutUint64(own[8*(1+i):], w)
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
				all[k*r+i] = word(r, 1+i)
			}
		}
	}
	return all, Outcome(c, err, text, func(r int) uint64 { return word(r, 0) })
}

// MaxErrorText bounds the encoded error one rank sends the others: a
// longer text is cut, and a record announcing more is malformed.
const MaxErrorText = 64 << 10

// Text is err encoded for Outcome (nil when err is nil): its class code
// and text, cut to MaxErrorText bytes.
func Text(err error) []byte {
	if err == nil {
		return nil
	}
	return encode(err)
}

// Outcome gives every rank the error of the lowest rank whose gathered
// length word, length(r), is non-zero, or nil when there is none. err and
// text are this rank's own (text = Text(err)); every rank must call it
// with the same gathered words. A length past MaxErrorText is an
// ErrInternComm error on every rank, naming the rank that sent it.
func Outcome(c comm.Comm, err error, text []byte, length func(r int) uint64) error {
	failed, n, bad := FirstFailed(c.Size(), length)
	if bad != nil {
		return bad
	}
	return spread(c, err, text, failed, n)
}

// FirstFailed returns the lowest of n ranks whose length word is non-zero
// and that length (-1, 0 when none is), or an error when that word cannot
// be the length of an encoded error.
func FirstFailed(n int, length func(r int) uint64) (failed, size int, _ error) {
	for r := range n {
		l := length(r)
		if l == 0 {
			continue
		}
		if l > MaxErrorText+2 || l < 2 {
			return -1, 0, &ioerr.Error{Class: ioerr.ErrInternComm, Op: "agree", Rank: -1,
				Msg: fmt.Sprintf("rank %d announced an error record of %d bytes (at most %d): the ranks' records do not match, or memory was overwritten", r, l, MaxErrorText+2)}
		}
		return r, int(l), nil
	}
	return -1, 0, nil
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
	return recordWords(c, err, mine)
}

// encode packs an error's class code and text, cut to MaxErrorText.
func encode(err error) []byte {
	s := err.Error()
	if len(s) > MaxErrorText {
		s = s[:MaxErrorText-len(cut)] + cut
	}
	b := make([]byte, 2, 2+len(s))
	binary.LittleEndian.PutUint16(b, uint16(ioerr.Code(ioerr.ClassOf(err))))
	return append(b, s...)
}

const cut = " [...]"

func decode(b []byte) error {
	if len(b) < 2 {
		return ioerr.Remote(ioerr.ErrOther, "collio: malformed error from another rank")
	}
	return ioerr.Remote(ioerr.FromCode(int(binary.LittleEndian.Uint16(b))), string(b[2:]))
}
