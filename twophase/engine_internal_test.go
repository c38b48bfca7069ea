package twophase

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The room for inlined request lists shrinks with the ranks, so that a
// rank's blocks stay within inlineBudget, and is none where too small.
func TestInlineWidth(t *testing.T) {
	for n, want := range map[int]int{1: 1024, 4: 1024, 16: 992, 64: 224, 256: 32, 400: 0, 512: 0, 100000: 0} {
		got := inlineWidth(n)
		require.Equal(t, want, got, "%d ranks", n)
		require.LessOrEqual(t, n*(countsWidth+flagWidth+got), max(inlineBudget, n*(countsWidth+flagWidth)), "%d ranks", n)
		require.Zero(t, got%8, "%d ranks", n)
	}
}
