package mpi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// beforeWait yields at most once per yieldEvery, and again once it has
// passed.
func TestBeforeWaitYieldsEveryFewMilliseconds(t *testing.T) {
	now := int64(time.Since(epoch))
	lastYield.Store(now)
	beforeWait()
	require.Equal(t, now, lastYield.Load(), "a yield within yieldEvery of the last")
	lastYield.Store(now - int64(yieldEvery))
	beforeWait()
	require.GreaterOrEqual(t, lastYield.Load(), now, "no yield once yieldEvery had passed")
}
