package faulty

import "github.com/collio/collio/driver"

var (
	_ driver.RunWriter = (*file)(nil)
	_ driver.RunReader = (*file)(nil)
)

// WriteRuns applies the rules to each run as to one WriteV call (each run
// is a write call for eio_call and short_write) and passes the runs on to
// the inner file in batches (driver.WriteRuns), so that batching survives
// the wrapper: the runs before an injected fault go in one batch, then
// the faulted run's allowed prefix, and the count returned is exactly what
// reached the inner file.
func (f *file) WriteRuns(runs []driver.Run) (int64, error) {
	var total int64
	start := 0            // first run of the pending batch
	var plans []writePlan // budgets charged by the pending batch's runs
	flush := func(end int) error {
		batch := runs[start:end]
		start = end
		if len(batch) == 0 {
			return nil
		}
		n, err := driver.WriteRuns(f.inner, batch)
		total += n
		left := n
		var want int64
		for i, r := range batch {
			wrote := min(r.Len(), left)
			left -= wrote
			want += r.Len()
			f.settle(plans[i], wrote)
		}
		plans = plans[:0]
		if err == nil && n < want { // cannot happen with a conforming inner driver
			err = &errShortInner{}
		}
		return err
	}
	for i, r := range runs {
		n := r.Len()
		nth, all := f.count(OpWrite)
		if f.crashes(OpWrite, nth, all) {
			flush(i) // the runs before the crashing one were written
			crash()
		}
		err := f.callFaults(OpWrite, nth, all, "pwritev")
		if err == nil {
			err = f.offsetFault(r.Off, n, "pwritev")
		}
		if err != nil {
			if ferr := flush(i); ferr != nil {
				return total, ferr
			}
			return total, err
		}
		if r.Off < 0 { // let the inner driver reject it
			if ferr := flush(i); ferr != nil {
				return total, ferr
			}
			k, err := f.inner.WriteV(r.Bufs, r.Off)
			return total + int64(k), err
		}
		p := f.planWrite(n, nth, "pwritev")
		if p.err == nil {
			plans = append(plans, p)
			continue
		}
		if ferr := flush(i); ferr != nil {
			f.settle(p, 0)
			return total, ferr
		}
		wrote := 0
		if p.allowed > 0 {
			wrote, err = f.inner.WriteV(prefix(r.Bufs, p.allowed), r.Off)
		}
		f.settle(p, int64(wrote))
		total += int64(wrote)
		if err != nil {
			return total, err
		}
		return total, p.err
	}
	return total, flush(len(runs))
}

// ReadRuns applies the rules to each run as to one ReadV call and passes
// the runs before an injected fault on to the inner file in one batch
// (driver.ReadRuns).
func (f *file) ReadRuns(runs []driver.Run) (int64, error) {
	for i, r := range runs {
		err := f.before(OpRead, "preadv")
		if err == nil {
			err = f.offsetFault(r.Off, r.Len(), "preadv")
		}
		if err != nil {
			n, ferr := driver.ReadRuns(f.inner, runs[:i])
			if ferr != nil {
				return n, ferr
			}
			return n, err
		}
	}
	return driver.ReadRuns(f.inner, runs)
}
