package ufs

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// manyBuffers returns n buffers of varied sizes, every fifth one empty.
func manyBuffers(n int, seed byte) [][]byte {
	bufs := make([][]byte, n)
	for i := range bufs {
		if i%5 == 0 {
			bufs[i] = []byte{}
			continue
		}
		bufs[i] = pattern(1+i%13, seed+byte(i))
	}
	return bufs
}

func sameShape(bufs [][]byte) [][]byte {
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = make([]byte, len(b))
	}
	return out
}

func TestWriteVReadVManyBuffers(t *testing.T) {
	for _, n := range []int{1, 3, 1024, 1025, 2500} {
		f, _ := openNew(t)
		bufs := manyBuffers(n, byte(n))
		want := bytes.Join(bufs, nil)

		written, err := f.WriteV(bufs, 100)
		require.NoError(t, err, n)
		assert.Equal(t, len(want), written, n)

		flat := make([]byte, len(want))
		_, err = f.ReadAt(flat, 100)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, flat), "file holds the buffers back to back (%d buffers)", n)

		back := sameShape(bufs)
		read, err := f.ReadV(back, 100)
		require.NoError(t, err, n)
		assert.Equal(t, len(want), read)
		assert.Equal(t, bufs, back, n)
	}
}

func TestWriteVOnlyEmptyBuffers(t *testing.T) {
	f, _ := openNew(t)
	n, err := f.WriteV([][]byte{{}, nil, {}}, 0)
	assert.NoError(t, err)
	assert.Zero(t, n)
	n, err = f.ReadV(nil, 0)
	assert.NoError(t, err)
	assert.Zero(t, n)
}

func TestReadVAtEOF(t *testing.T) {
	f, _ := openNew(t)
	_, err := f.WriteAt([]byte("abcdefg"), 0)
	require.NoError(t, err)

	bufs := [][]byte{make([]byte, 3), {}, make([]byte, 3), make([]byte, 3)}
	n, err := f.ReadV(bufs, 1)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 6, n)
	assert.Equal(t, "bcd", string(bufs[0]))
	assert.Equal(t, "efg", string(bufs[2]))

	n, err = f.ReadV([][]byte{make([]byte, 4)}, 50)
	assert.ErrorIs(t, err, io.EOF)
	assert.Zero(t, n)
}

// TestVectoredLoopAdvancesThroughPartialTransfers drives the loop with a
// fake call that moves few bytes at a time and is sometimes interrupted,
// on buffer lists with and without empty buffers.
func TestVectoredLoopAdvancesThroughPartialTransfers(t *testing.T) {
	t.Run("with empty buffers", func(t *testing.T) { partialTransfers(t, manyBuffers(3000, 9)) })
	t.Run("without", func(t *testing.T) {
		partialTransfers(t, slices.DeleteFunc(manyBuffers(3000, 9), isEmpty))
	})
}

func partialTransfers(t *testing.T, bufs [][]byte) {
	f, _ := openNew(t)
	want := bytes.Join(bufs, nil)
	var sink []byte
	calls := 0
	fake := func(fd int, iovs [][]byte, off int64) (int, error) {
		calls++
		assert.LessOrEqual(t, len(iovs), iovMax)
		assert.Equal(t, int64(len(sink)), off, "offset follows progress")
		if calls%4 == 0 {
			return 0, unix.EINTR
		}
		budget, moved := 1+calls%11, 0 // short, often ending mid-buffer
		for _, b := range iovs {
			assert.NotEmpty(t, b, "empty buffers are skipped")
			take := min(budget-moved, len(b))
			sink = append(sink, b[:take]...)
			moved += take
			if moved == budget {
				break
			}
		}
		return moved, nil
	}
	callerCopy := make([][]byte, len(bufs))
	copy(callerCopy, bufs)

	n, err := f.vectored("pwritev", bufs, 0, fake, io.ErrShortWrite)
	require.NoError(t, err)
	assert.Equal(t, len(want), n)
	assert.True(t, bytes.Equal(want, sink), "bytes arrive in order")
	assert.Equal(t, callerCopy, bufs, "the caller's slice headers are untouched")
}

// A list of non-empty buffers that one call moves whole is not copied:
// runs of a few buffers moved one call each (without cgo, with O_DIRECT)
// cost no allocation each. (Past 8 buffers x/sys/unix allocates its
// iovecs, once per call.)
func TestVectoredMovesWithoutAllocating(t *testing.T) {
	f, _ := openNew(t)
	bufs := slices.DeleteFunc(manyBuffers(8, 3), isEmpty)
	back := sameShape(bufs)
	var werr, rerr error
	allocs := testing.AllocsPerRun(20, func() {
		_, werr = f.WriteV(bufs, 10)
		_, rerr = f.ReadV(back, 10)
	})
	require.NoError(t, werr)
	require.NoError(t, rerr)
	assert.Equal(t, bufs, back)
	assert.Zero(t, allocs)
}

func TestVectoredStopsOnError(t *testing.T) {
	f, _ := openNew(t)
	fake := func(fd int, iovs [][]byte, off int64) (int, error) {
		if off == 0 {
			return 2, nil
		}
		return 0, unix.ENOSPC
	}
	n, err := f.vectored("pwritev", [][]byte{make([]byte, 5)}, 0, fake, io.ErrShortWrite)
	assert.Equal(t, 2, n)
	assert.ErrorIs(t, err, unix.ENOSPC)
}

func TestAdvance(t *testing.T) {
	bufs := [][]byte{[]byte("abc"), []byte("de"), []byte("fgh")}
	rest := advance(bufs, 4)
	assert.Equal(t, [][]byte{[]byte("e"), []byte("fgh")}, rest)
	assert.Empty(t, advance(rest, 4))
}
