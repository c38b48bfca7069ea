package hints

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkSameOn runs CheckSame on n fake ranks, where rank r resolves
// hintsOf(r), and returns each rank's error. It fails the test if ranks
// made different sequences of collective calls.
func checkSameOn(t *testing.T, n int, hintsOf func(rank int) map[string]string) []error {
	t.Helper()
	errs, calls, mixed := runFake(n, func(c comm.Comm) error {
		s, err := Resolve(hintsOf(c.Rank()), Options{Getenv: envWith("")})
		if err != nil {
			return fmt.Errorf("resolve: %w", err)
		}
		return CheckSame(c, s)
	})
	require.NoError(t, mixed)
	for r := range calls {
		require.Equal(t, calls[0], calls[r], "rank %d made other collective calls", r)
	}
	return errs
}

func TestCheckSameAgreeing(t *testing.T) {
	for _, n := range []int{1, 3, 4} {
		errs := checkSameOn(t, n, func(rank int) map[string]string {
			// Same effective values, spelled differently, and per-rank
			// values of hints that need not agree.
			h := map[string]string{CBBufferSize: "16m", RomioCBWrite: "ENABLE"}
			if rank%2 == 1 {
				h = map[string]string{CBBufferSize: "16777216", RomioCBWrite: "enable"}
			}
			h[IndRdBufferSize] = fmt.Sprint(4096 * (rank + 1))
			h[DirectRead] = fmt.Sprint(rank == 0)
			return h
		})
		for r, err := range errs {
			assert.NoError(t, err, "n=%d rank %d", n, r)
		}
	}
}

func TestCheckSameOneRankDiffers(t *testing.T) {
	for _, n := range []int{3, 4} {
		errs := checkSameOn(t, n, func(rank int) map[string]string {
			if rank == n-1 {
				return map[string]string{CBBufferSize: "8m"}
			}
			return nil
		})
		want := fmt.Sprintf("hint cb_buffer_size differs between ranks: rank 0 has 16777216, rank %d has 8388608", n-1)
		assertSameError(t, errs, want)
	}
}

func TestCheckSameTwoRanksDiffer(t *testing.T) {
	errs := checkSameOn(t, 4, func(rank int) map[string]string {
		if rank >= 2 {
			return map[string]string{CBBufferSize: "8m"}
		}
		return nil
	})
	assertSameError(t, errs, "hint cb_buffer_size differs between ranks: rank 0 has 16777216, ranks [2 3] have 8388608")

	// Two ranks with different values, on two keys, one of them rank 0's.
	errs = checkSameOn(t, 3, func(rank int) map[string]string {
		switch rank {
		case 0:
			return map[string]string{CollioStrategy: "tam"}
		case 1:
			return map[string]string{E10CachePath: "/ssd a", CollioStrategy: "tam"}
		}
		return map[string]string{E10CachePath: "/ssd b"}
	})
	assertSameError(t, errs,
		`hint e10_cache_path differs between ranks: rank 0 has "", rank 1 has "/ssd a", rank 2 has "/ssd b"; `+
			"hint collio_strategy differs between ranks: rank 0 has tam, rank 2 has auto")
}

// assertSameError checks that every rank returned the same ErrNotSame error
// with message want.
func assertSameError(t *testing.T, errs []error, want string) {
	t.Helper()
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		assert.ErrorIs(t, err, ioerr.ErrNotSame, "rank %d", r)
		assert.Contains(t, err.Error(), want, "rank %d", r)
		assert.Equal(t, errs[0].Error(), err.Error(), "rank %d", r)
	}
}

func TestCheckSameUsesEffectiveValues(t *testing.T) {
	// Derived values count too: cb_nodes computed differently at open.
	errs, _, mixed := runFake(3, func(c comm.Comm) error {
		s, err := Resolve(nil, Options{Getenv: envWith("")})
		if err != nil {
			return err
		}
		s, err = s.With(CBNodes, fmt.Sprint(1+c.Rank()/2))
		if err != nil {
			return err
		}
		return CheckSame(c, s)
	})
	require.NoError(t, mixed)
	assertSameError(t, errs, "hint cb_nodes differs between ranks: rank 0 has 1, rank 2 has 2")
}

func TestFormatRanks(t *testing.T) {
	assert.Equal(t, "[2 3]", formatRanks([]int{2, 3}))
	assert.Equal(t, "[1 4-9 12 13]", formatRanks([]int{1, 4, 5, 6, 7, 8, 9, 12, 13}))
	assert.Equal(t, "[7]", formatRanks([]int{7}))
}

func TestDescribeDifferingBoundsTheMessage(t *testing.T) {
	values := make([]map[int]string, 10)
	ranks := []int{}
	for r := 1; r < 10; r++ {
		values[r] = map[int]string{0: fmt.Sprint(r)}
		ranks = append(ranks, r)
	}
	got := describeDiffering(0, ranks, values)
	assert.Equal(t, "rank 1 has 1, rank 2 has 2, rank 3 has 3, rank 4 has 4, 5 more ranks differ", got)
}

func TestWireRoundTrip(t *testing.T) {
	in := []string{"", "a", "cb_buffer_size", string(make([]byte, 300))}
	out, ok := decodeStrings(encodeStrings(in), len(in))
	require.True(t, ok)
	assert.Equal(t, in, out)
	_, ok = decodeStrings(encodeStrings(in), len(in)-1)
	assert.False(t, ok, "more strings than allowed")
	_, ok = decodeStrings([]byte{5, 'a'}, 10)
	assert.False(t, ok)

	flags := []bool{true, false, false, true, false, false, false, false, true}
	rows := unpackBits(packBits(flags, 2), 2, len(flags), 1)
	assert.Equal(t, flags, rows[0])
}

// The same checks over the project's in-memory communicator, with a
// deadline so that a protocol that hangs fails instead.
func TestCheckSameMemoryWorld(t *testing.T) {
	for _, tc := range []struct {
		n    int
		diff []int
		want string
	}{
		{1, nil, ""},
		{3, nil, ""},
		{4, nil, ""},
		{3, []int{1}, "rank 0 has 16777216, rank 1 has 1048576"},
		{4, []int{1, 3}, "rank 0 has 16777216, ranks [1 3] have 1048576"},
	} {
		t.Run(fmt.Sprintf("n=%d/diff=%v", tc.n, tc.diff), func(t *testing.T) {
			errs := make([]error, tc.n)
			err := comm.RunWorldTimeout(tc.n, 2, 10*time.Second, func(c comm.Comm) error {
				h := map[string]string{}
				if slices.Contains(tc.diff, c.Rank()) {
					h[CBBufferSize] = "1m"
				}
				s, err := Resolve(h, Options{Getenv: envWith("")})
				if err != nil {
					return err
				}
				errs[c.Rank()] = CheckSame(c, s)
				return nil
			})
			require.NoError(t, err)
			if tc.want == "" {
				for r, err := range errs {
					assert.NoError(t, err, "rank %d", r)
				}
				return
			}
			assertSameError(t, errs, "hint cb_buffer_size differs between ranks: "+tc.want)
		})
	}
}
