package driver_test

import (
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plain is a decorator with no capabilities of its own.
type plain struct{ driver.File }

func (p plain) Unwrap() driver.File { return p.File }

// holder records the WriteBack calls it gets.
type holder struct {
	driver.File
	calls []string
}

func (h *holder) Pending() (int64, int64)        { h.calls = append(h.calls, "pending"); return 4, 9 }
func (h *holder) Unsynced() (int64, int64)       { h.calls = append(h.calls, "unsynced"); return 2, 9 }
func (h *holder) SyncCopies() error              { h.calls = append(h.calls, "synccopies"); return nil }
func (h *holder) Drain()                         { h.calls = append(h.calls, "drain") }
func (h *holder) DrainRanges(r [][2]int64) error { h.calls = append(h.calls, "ranges"); return nil }
func (h *holder) DropPast(size int64) error      { h.calls = append(h.calls, "drop"); return nil }
func (h *holder) FellBack() bool                 { h.calls = append(h.calls, "fell"); return true }
func (h *holder) FallBack()                      { h.calls = append(h.calls, "fallback") }
func (h *holder) Direct() driver.DirectStatus    { return driver.DirectStatus{Write: true} }

// Capabilities are found through decorators that lack them, at any depth,
// and not where no layer has them.
func TestAsLooksThroughDecorators(t *testing.T) {
	h := &holder{}
	f := plain{plain{h}}
	wb, ok := driver.WriteBackOf(f)
	require.True(t, ok)
	start, end := wb.Pending()
	assert.Equal(t, [2]int64{4, 9}, [2]int64{start, end})
	wb.Drain()
	require.NoError(t, wb.DrainRanges([][2]int64{{0, 1}}))
	require.NoError(t, wb.DropPast(3))
	assert.True(t, wb.FellBack())
	wb.FallBack()
	assert.Equal(t, []string{"pending", "drain", "ranges", "drop", "fell", "fallback"}, h.calls)
	s, ok := driver.DirectOf(f)
	require.True(t, ok)
	assert.True(t, s.Write)
	got, ok := driver.As[*holder](f)
	require.True(t, ok)
	assert.Same(t, h, got)

	_, ok = driver.WriteBackOf(plain{&vectorOnly{}})
	assert.False(t, ok)
	_, ok = driver.WriteBackOf(nil)
	assert.False(t, ok)
	_, ok = driver.DirectOf(plain{nil})
	assert.False(t, ok)
}
