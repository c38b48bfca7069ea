// Package faulty is a fault-injection driver: it wraps another driver and
// makes chosen calls fail (ENOSPC after a byte budget, EIO on the K-th
// call of an operation or at an offset), write short, run slowly, or kill
// the process, so that collio's error paths can be tested, including
// under mpirun where only one rank's I/O fails or one rank dies.
//
// Importing it registers the driver "faulty": a path "faulty:REST" opens
// REST through the driver that driver.Resolve picks for it ("faulty:/tmp/f"
// uses ufs or the detected file system, "faulty:sim:/tmp/f" the sim
// driver). Its rules come from hints at each open:
//
//   - collio_fault: the rules, in the syntax of ParseRules;
//   - collio_fault_ranks: the ranks they apply to (empty: all).
//
// A driver does not know its rank: adio puts the opening rank, in
// decimal, into OpenOptions.Params under hints.CollioRank ("collio_rank").
// When it is absent (a direct driver user) the rank counts as 0.
//
// Go tests can instead build a driver with fixed rules: New(inner, rules...).
// Such a driver also honours the hint rules.
//
// Injected errors are *os.PathError values around an *Injected error that
// unwraps to the errno (syscall.ENOSPC, syscall.EIO), so collio classifies
// them as ErrNoSpace and ErrIO; errors from the inner driver pass through
// unchanged. A write that does not write all its bytes always returns an
// error.
package faulty

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
)

// Name is the driver's name and path prefix.
const Name = "faulty"

func init() { driver.Register(&faultyDriver{}) }

type faultyDriver struct {
	inner driver.Driver // nil: resolve each path with driver.Resolve
	rules []Rule        // fixed rules (New), applied to every rank

	opens   atomic.Int64 // Open calls, for eio_call=open:K
	written atomic.Int64 // bytes written through all files, for NoSpaceProcess
}

// New returns a faulty driver that opens paths with inner (as given, no
// prefix resolution) and applies rules to every file, plus any rules from
// the collio_fault hints. It panics on an invalid rule, a programming
// error in a test.
func New(inner driver.Driver, rules ...Rule) driver.Driver {
	if inner == nil {
		panic("faulty: New with a nil inner driver")
	}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			panic("faulty: " + err.Error())
		}
	}
	return &faultyDriver{inner: inner, rules: slices.Clone(rules)}
}

func (d *faultyDriver) Name() string { return Name }

// resolve returns the driver and path that serve path.
func (d *faultyDriver) resolve(path string) (driver.Driver, string, error) {
	if d.inner != nil {
		return d.inner, path, nil
	}
	return driver.Resolve(path)
}

// Open parses the hint rules (a bad rule is an ioerr.ErrBadHint error
// naming it), applies the open faults, and opens path with the inner
// driver.
func (d *faultyDriver) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	rules, err := d.rulesFor(path, opts.Params)
	if err != nil {
		return nil, err
	}
	inner, innerPath, err := d.resolve(path)
	if err != nil {
		return nil, err
	}
	f := &file{drv: d, path: path, rules: rules, calls: make([]atomic.Int64, len(fileOps))}
	n := d.opens.Add(1)
	if err := f.callFaults(OpOpen, n, n, "open"); err != nil {
		return nil, err
	}
	f.inner, err = inner.Open(innerPath, opts)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Delete deletes path through the inner driver, without faults.
func (d *faultyDriver) Delete(path string) error {
	inner, innerPath, err := d.resolve(path)
	if err != nil {
		return err
	}
	return inner.Delete(innerPath)
}

// rulesFor returns the fixed rules plus the hint rules when this rank is
// among collio_fault_ranks.
func (d *faultyDriver) rulesFor(path string, params map[string]string) ([]Rule, error) {
	badHint := func(key, value string, err error) error {
		return &ioerr.Error{Class: ioerr.ErrBadHint, Op: "open", Path: path, Rank: -1, Err: err,
			Msg: fmt.Sprintf("hint %s=%q: %v", key, value, err)}
	}
	text := params[hints.CollioFault]
	hintRules, err := ParseRules(text)
	if err != nil {
		return nil, badHint(hints.CollioFault, text, err)
	}
	rankText := params[hints.CollioFaultRanks]
	ranks, err := parseRanks(rankText)
	if err != nil {
		return nil, badHint(hints.CollioFaultRanks, rankText, err)
	}
	rank := 0
	if v := strings.TrimSpace(params[hints.CollioRank]); v != "" {
		if rank, err = strconv.Atoi(v); err != nil || rank < 0 {
			return nil, &ioerr.Error{Class: ioerr.ErrArg, Op: "open", Path: path, Rank: -1,
				Msg: fmt.Sprintf("driver parameter %s=%q is not a rank", hints.CollioRank, v)}
		}
	}
	rules := slices.Clone(d.rules)
	if ranks == nil || slices.Contains(ranks, rank) {
		rules = append(rules, hintRules...)
	}
	return rules, nil
}

// sleep is time.Sleep; tests may replace it.
var sleep = time.Sleep

// pathErr builds the error a rule injects.
func (f *file) pathErr(op string, r Rule, errno syscall.Errno, short bool) error {
	return &os.PathError{Op: op, Path: f.path, Err: &Injected{Rule: r, Errno: errno, Short: short}}
}

// IncoherentCaches asks the inner driver (driver.NodeCaches): faults do
// not change what the file system caches.
func (d *faultyDriver) IncoherentCaches(path string, magic uint32) string {
	inner, innerPath, err := d.resolve(path)
	if err != nil {
		return ""
	}
	return driver.IncoherentCaches(inner, innerPath, magic)
}
