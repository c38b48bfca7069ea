//go:build cgo

package ufs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A call that a signal cuts short is finished in Go, with the rest of
// its run and then the next runs as usual.
func TestRunsFinishAShortCall(t *testing.T) {
	real := runCalls
	t.Cleanup(func() { runCalls = real })
	runs := someRuns(rand.New(rand.NewPCG(5, 6)), 60)
	want := runByRun(t, runs)
	// Stop at the first call, one in the middle, the last, and the
	// first of a run split over two calls (more than iovMax buffers).
	shape := newBatch()
	for _, r := range runs {
		shape.add(r)
	}
	shape.pin.Unpin()
	stops := []int{0, 1, len(shape.cnt) / 2, len(shape.cnt) - 1}
	for k := 0; k+1 < len(shape.cnt); k++ {
		if shape.runOf[k] == shape.runOf[k+1] {
			stops = append(stops, k)
			break
		}
	}
	require.Len(t, stops, 5, "some run must be split")
	for _, stop := range stops {
		// The batch stops after moving half of call stop.
		runCalls = func(fd int, b *batch, n int, write bool) (int, int64, int) {
			if stop >= n {
				return real(fd, b, n, write)
			}
			done, moved, errno := real(fd, b, stop, write)
			if done < stop || errno != 0 {
				return done, moved, errno
			}
			p := b.parts[stop]
			half := p.Len() / 2
			if half > 0 {
				var err error
				if write {
					_, err = unix.Pwrite(fd, bytes.Join(p.Bufs, nil)[:half], p.Off)
				} else {
					_, err = unix.Preadv(fd, prefix(p.Bufs, half), p.Off)
				}
				require.NoError(t, err)
			}
			return stop, half, 0
		}
		f, path := openNew(t)
		total, err := f.WriteRuns(runs)
		require.NoError(t, err, "stop at call %d", stop)
		got, _ := os.ReadFile(path)
		assert.True(t, bytes.Equal(want, got), "write, stop at call %d", stop)
		assert.EqualValues(t, len(bytes.Join(flatten(runs), nil)), total, "stop at call %d", stop)

		back := sameRuns(runs)
		total, err = f.ReadRuns(back)
		require.NoError(t, err, "stop at call %d", stop)
		assert.Equal(t, runs, back, "read, stop at call %d", stop)
		assert.EqualValues(t, len(bytes.Join(flatten(runs), nil)), total, "stop at call %d", stop)
	}
}
