package agree

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// A peer's length word sizes nothing before it is checked: 2^60, a
// negative length, or one too short for a class code is an error on every
// rank naming that rank, not a panic or a huge allocation.
func TestFirstFailedBoundsTheLength(t *testing.T) {
	for _, l := range []uint64{1 << 60, 1<<64 - 1, MaxErrorText + 3, 1} {
		failed, n, err := FirstFailed(3, func(r int) uint64 {
			if r == 1 {
				return l
			}
			return 0
		})
		require.Error(t, err, "length %d", l)
		assert.ErrorIs(t, err, ioerr.ErrInternComm)
		assert.Contains(t, err.Error(), "rank 1 announced")
		assert.Equal(t, -1, failed)
		assert.Zero(t, n)
	}
	failed, n, err := FirstFailed(3, func(r int) uint64 { return uint64(r) * 10 })
	require.NoError(t, err)
	assert.Equal(t, 1, failed)
	assert.Equal(t, 10, n)
}

// An error text longer than MaxErrorText is cut, so the record announces
// a length every peer accepts, and it still arrives on every rank.
func TestLongErrorIsCut(t *testing.T) {
	long := ioerr.New(ioerr.ErrIO, "write", "%s", strings.Repeat("x", 3*MaxErrorText))
	text := Text(long)
	require.LessOrEqual(t, len(text), MaxErrorText+2)
	errs := make([]error, 2)
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		var mine error
		if c.Rank() == 1 {
			mine = long
		}
		errs[c.Rank()] = Errors(c, mine)
		return nil
	}))
	assert.ErrorIs(t, errs[0], ioerr.ErrIO)
	assert.True(t, strings.HasSuffix(errs[0].Error(), cut), "the text says it was cut")
}

// FuzzDecodeErrorRecord: the words peers send in an agreement (one length
// word per rank) and the error record a failing rank then broadcasts.
// Whatever they hold, FirstFailed and decode neither panic nor accept a
// length past the bound, and decode always gives an error with a class.
func FuzzDecodeErrorRecord(f *testing.F) {
	seed := func(lengths []uint64, record []byte) []byte {
		b := []byte{byte(len(lengths))}
		for _, l := range lengths {
			b = binary.LittleEndian.AppendUint64(b, l)
		}
		return append(b, record...)
	}
	f.Add(seed([]uint64{0, 0, 0}, nil))
	f.Add(seed([]uint64{0, 7, 0}, append([]byte{3, 0}, "hello"...)))
	f.Add(seed([]uint64{1 << 60, 0}, nil))
	f.Add(seed([]uint64{1}, []byte{9}))
	f.Add(seed([]uint64{2}, []byte{0xff, 0xff}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0])
		data = data[1:]
		words := make([]uint64, n)
		for r := range words {
			if len(data) >= 8 {
				words[r] = binary.LittleEndian.Uint64(data)
				data = data[8:]
			}
		}
		failed, size, err := FirstFailed(n, func(r int) uint64 { return words[r] })
		if err != nil {
			if !errors.Is(err, ioerr.ErrInternComm) {
				t.Fatalf("bad length: error %v is not ErrInternComm", err)
			}
			return
		}
		if failed < 0 {
			return
		}
		if size < 2 || size > MaxErrorText+2 || uint64(size) != words[failed] {
			t.Fatalf("rank %d's length %d accepted as %d", failed, words[failed], size)
		}
		rec := data[:min(size, len(data))]
		derr := decode(rec)
		if derr == nil || ioerr.ClassOf(derr) == nil {
			t.Fatalf("decode(%q) = %v: no error class", rec, derr)
		}
	})
}

// A peer whose agreement record announces 2^60 bytes of error (a rank
// in a different call, or memory overwritten) is an ErrInternComm error
// naming it, where the length used to size an allocation and panic.
func TestErrorsRejectsHugePeerRecord(t *testing.T) {
	var got error
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		if c.Rank() == 1 {
			forged := binary.LittleEndian.AppendUint64(nil, 1<<60)
			req, err := c.Iallgather(forged, make([]byte, 16))
			if err != nil {
				return err
			}
			return req.Wait()
		}
		got = Errors(c, nil)
		return nil
	}))
	require.ErrorIs(t, got, ioerr.ErrInternComm)
	assert.Contains(t, got.Error(), "rank 1 announced an error record of 1152921504606846976 bytes")
}
