package cache

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/require"
)

// lockLog is a driver.File that records Lock and Unlock calls.
type lockLog struct {
	driver.File
	mu    sync.Mutex
	calls []string
}

func (l *lockLog) Lock(off, length int64, excl bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("lock %d+%d %v", off, length, excl))
	return nil
}

func (l *lockLog) Unlock(off, length int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("unlock %d+%d", off, length))
	return nil
}

func (l *lockLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

// Overlapping holders through one open file: the driver sees a lock only
// where a range becomes held and an unlock only where it becomes free.
func TestLockTableCounts(t *testing.T) {
	log := &lockLog{}
	lt := &lockTable{inner: log}
	require.NoError(t, lt.Lock(0, 100, true))
	require.Equal(t, []string{"lock 0+100 true"}, log.take())
	require.NoError(t, lt.Lock(50, 100, true))
	require.Equal(t, []string{"lock 100+50 true"}, log.take())
	require.NoError(t, lt.Unlock(50, 100, true))
	require.Equal(t, []string{"unlock 100+50"}, log.take())
	require.NoError(t, lt.Lock(20, 10, false)) // shared inside exclusive: nothing to do
	require.Empty(t, log.take())
	require.NoError(t, lt.Unlock(0, 100, true))
	require.Equal(t, []string{"unlock 0+20", "unlock 30+70"}, log.take())
	require.NoError(t, lt.Unlock(20, 10, false))
	require.Equal(t, []string{"unlock 20+10"}, log.take())
	require.Empty(t, lt.segs)

	// Shared then exclusive upgrades; to end of file (length 0).
	require.NoError(t, lt.Lock(10, 0, false))
	require.NoError(t, lt.Lock(0, 20, true))
	require.Equal(t, []string{"lock 10+0 false", "lock 0+20 true"}, log.take())
	require.NoError(t, lt.Unlock(10, 0, false))
	require.Equal(t, []string{"unlock 20+0"}, log.take())
	require.NoError(t, lt.Unlock(0, 20, true))
	require.Equal(t, []string{"unlock 0+20"}, log.take())
	require.Empty(t, lt.segs)
	require.Equal(t, int64(math.MaxInt64), lockEnd(5, 0))
}

// Many holders of random ranges: the table ends empty and the driver's
// locks always equal the union of the held ranges.
func TestLockTableRandom(t *testing.T) {
	log := &lockLog{}
	lt := &lockTable{inner: log}
	held := map[int64]int{} // byte -> holders
	type hold struct{ off, n int64 }
	var holds []hold
	seed := uint64(7)
	rnd := func(n int64) int64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int64(seed>>33) % n
	}
	locked := map[int64]bool{}
	apply := func() {
		for _, c := range log.take() {
			var off, n int64
			var ex bool
			if _, err := fmt.Sscanf(c, "lock %d+%d %v", &off, &n, &ex); err == nil {
				for b := off; b < off+n; b++ {
					locked[b] = true
				}
				continue
			}
			_, err := fmt.Sscanf(c, "unlock %d+%d", &off, &n)
			require.NoError(t, err)
			for b := off; b < off+n; b++ {
				delete(locked, b)
			}
		}
	}
	for i := 0; i < 400; i++ {
		if len(holds) > 0 && rnd(2) == 0 {
			k := rnd(int64(len(holds)))
			h := holds[k]
			holds = append(holds[:k], holds[k+1:]...)
			require.NoError(t, lt.Unlock(h.off, h.n, true))
			for b := h.off; b < h.off+h.n; b++ {
				held[b]--
			}
		} else {
			h := hold{rnd(200), 1 + rnd(40)}
			holds = append(holds, h)
			require.NoError(t, lt.Lock(h.off, h.n, true))
			for b := h.off; b < h.off+h.n; b++ {
				held[b]++
			}
		}
		apply()
		for b := int64(0); b < 260; b++ {
			require.Equal(t, held[b] > 0, locked[b], "byte %d after step %d", b, i)
		}
	}
}
