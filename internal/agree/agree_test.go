package agree

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
)

// Every rank gets every rank's words, in rank order, when nothing failed.
func TestRecordSharesWords(t *testing.T) {
	var mu sync.Mutex
	got := map[int][]uint64{}
	require.NoError(t, comm.RunWorld(3, 0, func(c comm.Comm) error {
		r := uint64(c.Rank())
		all, err := Record(c, nil, []uint64{r, 10 + r})
		mu.Lock()
		got[c.Rank()] = all
		mu.Unlock()
		return err
	}))
	for r := range 3 {
		assert.Equal(t, []uint64{0, 10, 1, 11, 2, 12}, got[r], "rank %d", r)
	}
}

// A failure on some ranks becomes the lowest failing rank's error on every
// rank, and the words still arrive.
func TestRecordAgreesOnTheLowestFailingRank(t *testing.T) {
	var mu sync.Mutex
	errs := map[int]error{}
	words := map[int][]uint64{}
	require.NoError(t, comm.RunWorld(4, 0, func(c comm.Comm) error {
		var local error
		if c.Rank() >= 2 {
			local = ioerr.New(ioerr.ErrAccess, "open", "denied on rank %d", c.Rank())
		}
		all, err := Record(c, local, []uint64{7})
		mu.Lock()
		errs[c.Rank()], words[c.Rank()] = err, all
		mu.Unlock()
		return nil
	}))
	for r := range 4 {
		require.Error(t, errs[r], "rank %d", r)
		assert.Contains(t, errs[r].Error(), "denied on rank 2", "rank %d", r)
		assert.True(t, errors.Is(errs[r], ioerr.ErrAccess) || ioerr.ClassOf(errs[r]) == ioerr.ErrAccess, "rank %d: class kept", r)
		assert.Equal(t, []uint64{7, 7, 7, 7}, words[r])
	}
}

func TestRecordWithoutWords(t *testing.T) {
	require.NoError(t, comm.RunWorld(2, 0, func(c comm.Comm) error {
		all, err := Record(c, nil, nil)
		if len(all) != 0 {
			return fmt.Errorf("rank %d: got words %v", c.Rank(), all)
		}
		return err
	}))
}
