package coll

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/metrics"
	"github.com/stretchr/testify/require"
)

// Without overlap each round's I/O runs at once and is all waited for;
// with overlap it runs behind the caller, one round at a time, and the
// first error is kept.
func TestPipeline(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	for _, overlap := range []bool{false, true} {
		var stats metrics.Call
		p := Pipeline{Overlap: overlap, Stats: &stats}
		var running, most atomic.Int32
		round := func(err error) func() IOResult {
			return func() IOResult {
				n := running.Add(1)
				most.Store(max(most.Load(), n))
				time.Sleep(2 * time.Millisecond)
				running.Add(-1)
				return IOResult{Err: err, IO: time.Millisecond, RMW: time.Millisecond}
			}
		}
		for m := range 6 {
			p.Wait(m % 2)
			var err error
			switch m {
			case 2:
				err = first
			case 4:
				err = second
			}
			p.Start(m%2, round(err))
		}
		p.Drain()
		require.Equal(t, int32(1), most.Load(), "overlap %v: rounds' I/O at once", overlap)
		require.Equal(t, 6*time.Millisecond, stats.IO)
		require.Equal(t, 6*time.Millisecond, stats.RMW)
		require.ErrorIs(t, p.Err, first)
		if !overlap {
			require.Equal(t, 12*time.Millisecond, stats.IOWait)
		}
	}
}

// The root's file size reaches every rank, and so does the verdict that
// it could not be read: on the root as fileErr, elsewhere as size 0.
func TestBroadcastFileSize(t *testing.T) {
	err := comm.RunWorld(3, 0, func(c comm.Comm) error {
		size, fileErr, err := BroadcastFileSize(c, sizedFile{size: 1234}, 1)
		require.NoError(t, err)
		require.NoError(t, fileErr)
		require.Equal(t, int64(1234), size)
		bad := errors.New("stat failed")
		size, fileErr, err = BroadcastFileSize(c, sizedFile{err: bad}, 2)
		require.NoError(t, err)
		require.Zero(t, size)
		if c.Rank() == 2 {
			require.ErrorIs(t, fileErr, bad)
		} else {
			require.NoError(t, fileErr)
		}
		return nil
	})
	require.NoError(t, err)
}

// sizedFile is a driver.File whose only working call is Size.
type sizedFile struct {
	driver.File
	size int64
	err  error
}

func (f sizedFile) Size() (int64, error) { return f.size, f.err }
