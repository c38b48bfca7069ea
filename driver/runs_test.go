package driver_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectorOnly is a File that has WriteV and nothing else.
type vectorOnly struct {
	driver.File
	calls  []int64
	failAt int64
}

func (f *vectorOnly) WriteV(bufs [][]byte, off int64) (int, error) {
	if off == f.failAt {
		return 1, errors.New("disk on fire")
	}
	f.calls = append(f.calls, off)
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n, nil
}

func TestWriteRunsFallsBackToWriteV(t *testing.T) {
	f := &vectorOnly{failAt: -1}
	runs := []driver.Run{{Off: 10, Bufs: [][]byte{{1, 2}, {3}}}, {Off: 0, Bufs: nil}, {Off: 40, Bufs: [][]byte{{4}}}}
	n, err := driver.WriteRuns(f, runs)
	assert.NoError(t, err)
	assert.Equal(t, int64(4), n)
	assert.Equal(t, []int64{10, 0, 40}, f.calls, "one WriteV per run, in order")
	assert.Equal(t, int64(3), runs[0].Len())

	f = &vectorOnly{failAt: 0}
	n, err = driver.WriteRuns(f, runs)
	assert.EqualError(t, err, "disk on fire")
	assert.Equal(t, int64(4), n, "the first run and what the failing call moved")
	assert.Equal(t, []int64{10}, f.calls, "nothing after the failure")
}

// eofAt is a File whose ReadV fills buffers with 7s up to size and
// returns io.EOF when a read reaches past it.
type eofAt struct {
	driver.File
	size int64
}

func (f eofAt) ReadV(bufs [][]byte, off int64) (int, error) {
	n := 0
	for _, b := range bufs {
		for k := range b {
			if off+int64(n) >= f.size {
				return n, io.EOF
			}
			b[k] = 7
			n++
		}
	}
	return n, nil
}

func TestReadRunsFallsBackToReadV(t *testing.T) {
	runs := []driver.Run{
		{Off: 0, Bufs: [][]byte{{1, 1}, {1}}},
		{Off: 9, Bufs: [][]byte{{1, 1}, {1, 1}}}, // across the end at 10
		{Off: 20, Bufs: [][]byte{{1}}},           // past it
	}
	n, err := driver.ReadRuns(eofAt{size: 10}, runs)
	assert.NoError(t, err)
	assert.Equal(t, int64(4), n, "bytes that came from the file")
	assert.Equal(t, []driver.Run{
		{Off: 0, Bufs: [][]byte{{7, 7}, {7}}},
		{Off: 9, Bufs: [][]byte{{7, 0}, {0, 0}}},
		{Off: 20, Bufs: [][]byte{{0}}},
	}, runs, "zeros past end of file")
}

func TestHeld(t *testing.T) {
	var h driver.Held
	assert.True(t, h.Empty())
	assert.False(t, h.Add(driver.Run{Off: 0, Bufs: make([][]byte, driver.HeldBufs-1)}))
	assert.True(t, h.Add(driver.Run{Off: 10, Bufs: [][]byte{{1}}}), "full at HeldBufs buffers")
	f := &vectorOnly{failAt: -1}
	n, err := h.Move(f, true)
	assert.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, []int64{0, 10}, f.calls, "every run, in order")
	assert.True(t, h.Empty(), "a move empties the batch")
	n, err = h.Move(f, true)
	assert.NoError(t, err)
	assert.Zero(t, n)

	small := driver.Held{Limit: 2}
	assert.False(t, small.Add(driver.Run{Bufs: [][]byte{{1}}}))
	assert.True(t, small.Add(driver.Run{Off: 1, Bufs: [][]byte{{1}}}))
	n, err = small.Move(eofAt{size: 1}, false)
	assert.NoError(t, err)
	assert.Equal(t, int64(1), n, "reads count the bytes from the file")
}

// WriteVAt and ReadVAt move the buffers back to back from off, and stop
// at the first error with the bytes moved until then.
func TestVectoredAtOneCallEach(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "v")
	require.NoError(t, err)
	defer f.Close()
	n, err := driver.WriteVAt(f, [][]byte{[]byte("ab"), nil, []byte("cde")}, 3)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	got := [][]byte{make([]byte, 1), make([]byte, 3)}
	n, err = driver.ReadVAt(f, got, 4)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Equal(t, "b", string(got[0]))
	require.Equal(t, "cde", string(got[1]))
	n, err = driver.ReadVAt(f, [][]byte{make([]byte, 2), make([]byte, 4)}, 5)
	require.ErrorIs(t, err, io.EOF) // the file ends after 3 of the 6 bytes
	require.Equal(t, 3, n)
}
