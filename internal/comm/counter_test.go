package comm

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every rank adds at once: the values before each add are exactly
// init, init+1, ... once each, and a freed counter refuses use.
func TestMemCounter(t *testing.T) {
	const n, adds, init = 5, 200, 7
	var seen [init + n*adds]atomic.Int32
	require.NoError(t, RunWorld(n, 0, func(c Comm) error {
		d, err := c.Dup()
		if err != nil {
			return err
		}
		k, err := d.(CounterMaker).NewCounter(init)
		if err != nil {
			return err
		}
		for range adds {
			old, err := k.Add(1)
			if err != nil {
				return err
			}
			if old < init || old >= init+n*adds {
				return fmt.Errorf("Add gave %d, outside [%d, %d)", old, init, init+n*adds)
			}
			seen[old].Add(1)
		}
		if err := d.Barrier(); err != nil {
			return err
		}
		if v, err := k.Add(0); err != nil || v != init+n*adds {
			return fmt.Errorf("counter %d (%v) after all adds, want %d", v, err, init+n*adds)
		}
		if err := d.Barrier(); err != nil {
			return err
		}
		if c.Rank() == 0 {
			if err := k.Set(3); err != nil {
				return err
			}
		}
		if err := d.Barrier(); err != nil {
			return err
		}
		if v, err := k.Add(0); err != nil || v != 3 {
			return fmt.Errorf("counter %d (%v) after Set(3) on rank 0", v, err)
		}
		if err := k.Free(); err != nil {
			return err
		}
		if _, err := k.Add(1); err == nil {
			return fmt.Errorf("Add on a freed counter succeeded")
		}
		return d.Free()
	}))
	for v := init; v < init+n*adds; v++ {
		require.EqualValues(t, 1, seen[v].Load(), "value %d seen before an add", v)
	}
}
