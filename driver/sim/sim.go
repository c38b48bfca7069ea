// Package sim is an emulated striped parallel file system on a local
// directory, so that stripe-aware collective I/O can be measured on one
// machine. Importing it registers the driver "sim": a path "sim:/dir/f"
// stores its bytes in the ordinary file /dir/f (through the ufs driver, so
// contents are exact) while each request costs what it would on a
// Lustre-like system with N storage targets:
//
//   - stripe s of the file lives on target (s + start) % N;
//   - each target serves one request piece at a time, each costing a
//     latency plus its bytes at the target's bandwidth;
//   - stripe locks are cached by their last holder, and taking a stripe
//     that another writer holds costs a lock revocation (Lustre's extent
//     lock ping-pong between clients that write into the same stripes).
//
// See model.go for the exact rules. The calls really sleep, so wall-clock
// benchmarks see the costs.
//
// Parameters come from the collio_sim_* hints (OpenOptions.Params) and the
// requested layout (striping_unit, striping_factor, start_iodevice) when
// the file is created, and are stored in the sidecar ".<name>.sim" next to
// it; every later open, by any process, uses the stored values and
// ignores the hints. The shared state (when each target is free, who holds
// each stripe lock) is the memory-mapped sidecar ".<name>.simstate", so
// ranks that are separate processes on one machine share one emulated
// file system; it is not meant for files on a network file system shared
// by several machines. Each open File is one writer (one lock holder).
package sim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/ufs"
)

// Name is the driver's name and path prefix.
const Name = "sim"

func init() { driver.Register(New()) }

type simDriver struct {
	clock Clock
	inner driver.Driver
}

// New returns the sim driver with the real clock.
func New() driver.Driver { return NewWithClock(realClock{}) }

// NewWithClock returns a sim driver whose costs are measured and slept on
// c; tests pass a FakeClock to get exact, instantaneous results.
func NewWithClock(c Clock) driver.Driver { return &simDriver{clock: c, inner: ufs.New()} }

func (d *simDriver) Name() string { return Name }

// paramsPath and statePath name the sidecars of the data file path.
func paramsPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".sim")
}

func statePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".simstate")
}

// Open opens the data file with ufs, then the sidecars: a file that this
// open creates gets new ones (from the hints); an existing file uses
// those stored at its creation, or gets them now if it has none (a file
// created by another driver). When the directory cannot take sidecars
// (read-only), the hint values and a private state are used.
func (d *simDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	requested, err := paramsFromOptions(path, opts)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(path)
	fresh := opts.Flags&driver.OCreate != 0 && errors.Is(statErr, fs.ErrNotExist)
	inner, err := d.inner.Open(path, opts)
	if err != nil {
		return nil, err
	}
	p, st, err := openSidecars(path, requested, fresh)
	if err != nil {
		inner.Close()
		return nil, err
	}
	return &file{inner: inner, m: model{p: p}, st: st, clock: d.clock, writer: newWriterID()}, nil
}

func openSidecars(path string, requested params, fresh bool) (params, *state, error) {
	pp, sp := paramsPath(path), statePath(path)
	p, err := loadOrStoreParams(pp, requested, fresh)
	if isReadOnlyDir(err) {
		return requested, newMemState(requested.stripeCount, defaultSlots), nil
	}
	if err != nil {
		return params{}, nil, err
	}
	st, err := openStateFile(sp, p.stripeCount, fresh)
	if isReadOnlyDir(err) {
		return p, newMemState(p.stripeCount, defaultSlots), nil
	}
	return p, st, err
}

func isReadOnlyDir(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// loadOrStoreParams returns the parameters stored at name. fresh (or a
// missing file) stores requested first: replacing any old file when
// fresh, else only if no other opener stored one meanwhile.
func loadOrStoreParams(name string, requested params, fresh bool) (params, error) {
	if !fresh {
		data, err := os.ReadFile(name)
		if err == nil {
			return decodeParams(name, data)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return params{}, err
		}
	}
	if err := publish(name, requested.encode(), fresh); err != nil {
		return params{}, err
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return params{}, err
	}
	return decodeParams(name, data)
}

// publish writes data to name through a temporary file: renamed over name
// when replace, else linked to it unless name already exists.
func publish(name string, data []byte, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		return os.Rename(tmp.Name(), name)
	}
	if err := os.Link(tmp.Name(), name); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Delete removes the data file and its sidecars. A missing data file is
// an error (as for ufs); missing sidecars are not.
func (d *simDriver) Delete(path string) error {
	err := d.inner.Delete(path)
	for _, side := range []string{paramsPath(path), statePath(path)} {
		if rerr := os.Remove(side); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

// writerSeq numbers the opens of this process; with the pid it makes a
// writer identity unique on the machine.
var writerSeq atomic.Int64

func newWriterID() int64 {
	seq := writerSeq.Add(1) & (1<<20 - 1)
	if seq == 0 {
		seq = writerSeq.Add(1) & (1<<20 - 1)
	}
	return int64(os.Getpid())<<20 | seq
}
