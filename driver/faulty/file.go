package faulty

import (
	"slices"
	"sync/atomic"
	"syscall"

	"github.com/collio/collio/driver"
)

// file applies its rules around the inner file's calls.
type file struct {
	inner driver.File
	drv   *faultyDriver
	path  string
	rules []Rule

	calls   []atomic.Int64 // per fileOps entry
	all     atomic.Int64   // every call, for OpAny
	written atomic.Int64   // bytes written, for NoSpace
}

// Unwrap returns the wrapped file (sim.StatsOf looks through it).
func (f *file) Unwrap() driver.File { return f.inner }

// count records a call of op and returns its number among calls of op
// and among all calls.
func (f *file) count(op Op) (nth, nthAll int64) {
	i := slices.Index(fileOps, op)
	return f.calls[i].Add(1), f.all.Add(1)
}

func matchesCall(r Rule, nth int64) bool {
	return nth == r.Call || (r.AndLater && nth > r.Call)
}

// hits reports whether a rule of op's calls (or of any call) matches this
// call.
func hits(r Rule, op Op, nth, nthAll int64) bool {
	return (r.Op == op && matchesCall(r, nth)) || (r.Op == OpAny && op != OpOpen && matchesCall(r, nthAll))
}

// crashes reports whether a Crash rule hits this call.
func (f *file) crashes(op Op, nth, nthAll int64) bool {
	for _, r := range f.rules {
		if r.Kind == Crash && hits(r, op, nth, nthAll) {
			return true
		}
	}
	return false
}

// crash ends the process as a crash would; tests may replace it.
var crash = func() {
	syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL to oneself is delivered before kill returns
}

// callFaults crashes for a Crash rule, sleeps for the Slow rules of op
// and returns the error of the first EIOCall rule that hits this call.
// nth counts calls of op, nthAll all calls of the file.
func (f *file) callFaults(op Op, nth, nthAll int64, sysOp string) error {
	if f.crashes(op, nth, nthAll) {
		crash()
	}
	for _, r := range f.rules {
		if r.Kind == Slow && (r.Op == op || (r.Op == OpAny && op != OpOpen)) {
			sleep(r.Delay)
		}
	}
	for _, r := range f.rules {
		if r.Kind != EIOCall {
			continue
		}
		if hits(r, op, nth, nthAll) {
			return f.pathErr(sysOp, r, syscall.EIO, false)
		}
	}
	return nil
}

// before runs the call faults of a file operation.
func (f *file) before(op Op, sysOp string) error {
	nth, all := f.count(op)
	return f.callFaults(op, nth, all, sysOp)
}

// offsetFault returns the error of an EIOOffset rule inside [off, off+n).
func (f *file) offsetFault(off, n int64, sysOp string) error {
	for _, r := range f.rules {
		if r.Kind == EIOOffset && n > 0 && off <= r.N && r.N-off < n {
			return f.pathErr(sysOp, r, syscall.EIO, false)
		}
	}
	return nil
}

// reserve takes up to n bytes from a budget of limit bytes on counter and
// returns how many it got.
func reserve(counter *atomic.Int64, limit, n int64) int64 {
	for {
		cur := counter.Load()
		got := max(0, min(n, limit-cur))
		if counter.CompareAndSwap(cur, cur+got) {
			return got
		}
	}
}

// writePlan decides how much of an n-byte write (the nth write) may
// reach the inner file, and the error to return if not all of it: the
// byte budgets first (ENOSPC), then short writes. It charges the budgets;
// settle refunds what was not written.
type writePlan struct {
	allowed            int64
	fileTook, procTook int64
	err                error
}

func (f *file) planWrite(n, nth int64, sysOp string) writePlan {
	p := writePlan{allowed: n}
	var fileRule, procRule *Rule
	for i, r := range f.rules {
		switch {
		case r.Kind == NoSpace && (fileRule == nil || r.N < fileRule.N):
			fileRule = &f.rules[i]
		case r.Kind == NoSpaceProcess && (procRule == nil || r.N < procRule.N):
			procRule = &f.rules[i]
		}
	}
	if fileRule != nil {
		p.fileTook = reserve(&f.written, fileRule.N, n)
	} else {
		p.fileTook = n
		f.written.Add(n)
	}
	if procRule != nil {
		p.procTook = reserve(&f.drv.written, procRule.N, p.fileTook)
	} else {
		p.procTook = p.fileTook
		f.drv.written.Add(p.fileTook)
	}
	p.allowed = p.procTook
	switch {
	case p.fileTook < n:
		p.err = f.pathErr(sysOp, *fileRule, syscall.ENOSPC, false)
	case p.procTook < n:
		p.err = f.pathErr(sysOp, *procRule, syscall.ENOSPC, false)
	}
	if p.err == nil {
		for _, r := range f.rules {
			if r.Kind == ShortWrite && matchesCall(r, nth) {
				p.allowed = n / 2
				p.err = f.pathErr(sysOp, r, syscall.EIO, true)
				break
			}
		}
	}
	return p
}

// settle refunds the budget that the inner write did not use.
func (f *file) settle(p writePlan, wrote int64) {
	f.written.Add(-(p.fileTook - wrote))
	f.drv.written.Add(-(p.procTook - wrote))
}

// write runs one write of n bytes at off through do, which writes the
// first m bytes.
func (f *file) write(n, off int64, sysOp string, do func(m int64) (int, error)) (int, error) {
	nth, all := f.count(OpWrite)
	if err := f.callFaults(OpWrite, nth, all, sysOp); err != nil {
		return 0, err
	}
	if err := f.offsetFault(off, n, sysOp); err != nil {
		return 0, err
	}
	if off < 0 {
		return do(n) // let the inner driver reject it
	}
	p := f.planWrite(n, nth, sysOp)
	wrote, err := 0, error(nil)
	if p.allowed > 0 || p.err == nil {
		wrote, err = do(p.allowed)
	}
	f.settle(p, int64(wrote))
	if err != nil {
		return wrote, err
	}
	if int64(wrote) < n {
		if p.err == nil { // cannot happen with a conforming inner driver
			p.err = &errShortInner{}
		}
		return wrote, p.err
	}
	return wrote, nil
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	return f.write(int64(len(p)), off, "pwrite", func(m int64) (int, error) {
		return f.inner.WriteAt(p[:m], off)
	})
}

func (f *file) WriteV(bufs [][]byte, off int64) (int, error) {
	return f.write(totalLen(bufs), off, "pwritev", func(m int64) (int, error) {
		return f.inner.WriteV(prefix(bufs, m), off)
	})
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.before(OpRead, "pread"); err != nil {
		return 0, err
	}
	if err := f.offsetFault(off, int64(len(p)), "pread"); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

func (f *file) ReadV(bufs [][]byte, off int64) (int, error) {
	if err := f.before(OpRead, "preadv"); err != nil {
		return 0, err
	}
	if err := f.offsetFault(off, totalLen(bufs), "preadv"); err != nil {
		return 0, err
	}
	return f.inner.ReadV(bufs, off)
}

func totalLen(bufs [][]byte) int64 {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	return n
}

// prefix returns the first n bytes of bufs as a new list.
func prefix(bufs [][]byte, n int64) [][]byte {
	var out [][]byte
	for _, b := range bufs {
		if n <= 0 {
			break
		}
		take := min(int64(len(b)), n)
		out = append(out, b[:take])
		n -= take
	}
	return out
}

func (f *file) Sync() error {
	if err := f.before(OpSync, "fsync"); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *file) Truncate(size int64) error {
	if err := f.before(OpTruncate, "ftruncate"); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

func (f *file) Size() (int64, error) {
	if err := f.before(OpSize, "fstat"); err != nil {
		return 0, err
	}
	return f.inner.Size()
}

// Allocate fails with ENOSPC when length is more than a byte budget has
// left (it does not spend the budget: reserved space is not written).
func (f *file) Allocate(off, length int64) error {
	if err := f.before(OpAllocate, "fallocate"); err != nil {
		return err
	}
	if err := f.offsetFault(off, length, "fallocate"); err != nil {
		return err
	}
	for _, r := range f.rules {
		if (r.Kind == NoSpace && f.written.Load()+length > r.N) ||
			(r.Kind == NoSpaceProcess && f.drv.written.Load()+length > r.N) {
			return f.pathErr("fallocate", r, syscall.ENOSPC, false)
		}
	}
	return f.inner.Allocate(off, length)
}

func (f *file) Lock(off, length int64, exclusive bool) error {
	if err := f.before(OpLock, "lock"); err != nil {
		return err
	}
	return f.inner.Lock(off, length, exclusive)
}

func (f *file) Unlock(off, length int64) error {
	if err := f.before(OpUnlock, "unlock"); err != nil {
		return err
	}
	return f.inner.Unlock(off, length)
}

func (f *file) Layout() driver.Layout { return f.inner.Layout() }

// Close always closes the inner file; an injected close error replaces
// a successful result.
func (f *file) Close() error {
	ferr := f.before(OpClose, "close")
	err := f.inner.Close()
	if ferr != nil {
		return ferr
	}
	return err
}
