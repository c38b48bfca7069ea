package sim

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t *testing.T, d driver.Driver, path string, opts driver.OpenOptions) driver.File {
	t.Helper()
	f, err := d.Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func create(params map[string]string) driver.OpenOptions {
	return driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate, Params: params}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestRegisteredAndResolved(t *testing.T) {
	d, rest, err := driver.Resolve("sim:/tmp/x")
	require.NoError(t, err)
	assert.Equal(t, Name, d.Name())
	assert.Equal(t, "/tmp/x", rest)
}

func TestDefaultLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f := open(t, NewWithClock(NewFakeClock(0)), path, create(nil))
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 4, StartTarget: 0}, f.Layout())
}

func TestParamsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	d := NewWithClock(NewFakeClock(0))
	f := open(t, d, path, create(map[string]string{
		hints.CollioSimStripeSize:  "64k",
		hints.CollioSimStripeCount: "3",
		hints.CollioSimBandwidth:   "0",
		hints.CollioSimLatency:     "7",
		hints.CollioSimLockLatency: "9",
	}))
	want := driver.Layout{StripeSize: 64 << 10, StripeCount: 3, StartTarget: 0}
	assert.Equal(t, want, f.Layout())
	assert.FileExists(t, filepath.Join(dir, ".f.sim"))
	assert.FileExists(t, filepath.Join(dir, ".f.simstate"))

	// Reopened without hints, or with other ones: the stored values win.
	for _, params := range []map[string]string{nil, {hints.CollioSimStripeCount: "8"}} {
		g := open(t, d, path, driver.OpenOptions{Flags: driver.ORdWr, Params: params})
		assert.Equal(t, want, g.Layout())
		sf := g.(*file)
		assert.Equal(t, 7*time.Microsecond, sf.m.p.latency)
		assert.Equal(t, 9*time.Microsecond, sf.m.p.lockLatency)
		assert.Zero(t, sf.m.p.bandwidth)
	}
}

func TestStripingHintsOverride(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d := NewWithClock(NewFakeClock(0))
	opts := create(map[string]string{hints.CollioSimStripeSize: "4096", hints.CollioSimStripeCount: "2"})
	opts.Layout = driver.Layout{StripeSize: 2 << 20, StripeCount: 6, StartTarget: 5}
	f := open(t, d, path, opts)
	want := driver.Layout{StripeSize: 2 << 20, StripeCount: 6, StartTarget: 5}
	assert.Equal(t, want, f.Layout())
	assert.Equal(t, want, open(t, d, path, driver.OpenOptions{Flags: driver.ORdOnly}).Layout())

	// The requested layout is honoured only at create.
	g := open(t, d, path, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate,
		Layout: driver.Layout{StripeSize: 4096, StripeCount: 1}})
	assert.Equal(t, want, g.Layout())
}

func TestRecreateReplacesParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d := NewWithClock(NewFakeClock(0))
	f := open(t, d, path, create(map[string]string{hints.CollioSimStripeCount: "2"}))
	f.Close()
	require.NoError(t, d.Delete(path))
	g := open(t, d, path, create(map[string]string{hints.CollioSimStripeCount: "5"}))
	assert.Equal(t, 5, g.Layout().StripeCount)
}

func TestFileWithoutSidecarsGetsThem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(path, []byte("hello"), 0o644))
	f := open(t, NewWithClock(NewFakeClock(0)), path,
		driver.OpenOptions{Flags: driver.ORdOnly, Params: map[string]string{hints.CollioSimStripeCount: "7"}})
	assert.Equal(t, 7, f.Layout().StripeCount)
	assert.FileExists(t, filepath.Join(dir, ".plain.sim"))
	b := make([]byte, 5)
	_, err := f.ReadAt(b, 0)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
}

func TestBadParams(t *testing.T) {
	d := NewWithClock(NewFakeClock(0))
	for _, tc := range []struct {
		opts driver.OpenOptions
		want string
	}{
		{create(map[string]string{hints.CollioSimStripeCount: "0"}), hints.CollioSimStripeCount},
		{create(map[string]string{hints.CollioSimBandwidth: "fast"}), hints.CollioSimBandwidth},
		{create(map[string]string{hints.CollioSimLatency: "-1"}), hints.CollioSimLatency},
		{driver.OpenOptions{Flags: driver.OCreate | driver.ORdWr, Layout: driver.Layout{StripeCount: 2, StartTarget: 2}}, "start target"},
	} {
		path := filepath.Join(t.TempDir(), "f")
		_, err := d.Open(path, tc.opts)
		require.Error(t, err)
		assert.True(t, errors.Is(err, ioerr.ErrBadHint), "%v", err)
		assert.Contains(t, err.Error(), tc.want)
		assert.NoFileExists(t, path, "nothing is created with bad parameters")
	}
}

func TestData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f := open(t, NewWithClock(NewFakeClock(0)), path, create(map[string]string{hints.CollioSimStripeSize: "4096"}))
	a, b := pattern(10000, 1), pattern(3000, 2)
	n, err := f.WriteAt(a, 100)
	require.NoError(t, err)
	assert.Equal(t, len(a), n)
	n, err = f.WriteV([][]byte{b[:1000], nil, b[1000:]}, 20000)
	require.NoError(t, err)
	assert.Equal(t, len(b), n)

	got := make([]byte, len(a))
	_, err = f.ReadAt(got, 100)
	require.NoError(t, err)
	assert.Equal(t, a, got)
	g1, g2 := make([]byte, 500), make([]byte, 2500)
	_, err = f.ReadV([][]byte{g1, g2}, 20000)
	require.NoError(t, err)
	assert.Equal(t, b, append(g1, g2...))

	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(23000), size)
	_, err = f.ReadAt(make([]byte, 10), size-5)
	assert.ErrorIs(t, err, io.EOF)

	require.NoError(t, f.Allocate(0, 30000))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Truncate(50))
	size, err = f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(50), size)

	require.NoError(t, f.Lock(0, 10, true))
	require.NoError(t, f.Unlock(0, 10))
}

func TestDelete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	d := NewWithClock(NewFakeClock(0))
	f := open(t, d, path, create(nil))
	require.NoError(t, f.Close())
	require.NoError(t, d.Delete(path))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.ErrorIs(t, d.Delete(path), os.ErrNotExist)
}

func TestOpenMissingWithoutCreate(t *testing.T) {
	dir := t.TempDir()
	_, err := NewWithClock(NewFakeClock(0)).Open(filepath.Join(dir, "nope"), driver.OpenOptions{Flags: driver.ORdOnly})
	assert.ErrorIs(t, err, os.ErrNotExist)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "no sidecars for a file that does not exist")
}

func TestClosedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f := open(t, NewWithClock(NewFakeClock(0)), path, create(nil))
	require.NoError(t, f.Close())
	_, err := f.WriteAt([]byte("x"), 0)
	assert.Error(t, err)
	assert.Error(t, f.Close(), "a second close reports the closed file and does not unmap twice")
}
