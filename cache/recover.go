package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/collio/collio/driver"
	"golang.org/x/sys/unix"
)

// mergeRecords returns the union of the records' ranges, sorted. Every
// copy reads the cache as it is now (the result of all the writes), so
// the order of the writes does not matter any more.
func mergeRecords(recs []record) []span {
	spans := make([]span, 0, len(recs))
	for _, r := range recs {
		spans = append(spans, span{r.off, r.off + r.len})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// copyRecords copies the pending ranges of a journal from its cache file
// cachePath (the one vetJournal returned) to global and returns the bytes
// copied. The cache file must be a regular file of this user.
func copyRecords(global driver.File, cachePath string, info *journalInfo) (int64, error) {
	spans := mergeRecords(info.Pending)
	if len(spans) == 0 {
		return 0, nil
	}
	src, err := openOwned(cachePath, "cache file", unix.O_RDONLY, 0)
	if errors.Is(err, ErrUnsafe) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("opening the cache file: %w", err)
	}
	defer src.Close()
	buf := make([]byte, DefaultChunkSize*2)
	var total int64
	for _, s := range spans {
		for pos := s.start; pos < s.end; {
			chunk := buf[:min(int64(len(buf)), s.end-pos)]
			k, err := src.ReadAt(chunk, pos)
			if err != nil && !(errors.Is(err, io.EOF) && k == len(chunk)) {
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("%s ends at %d before the journalled range [%d, %d): %w",
						cachePath, pos+int64(k), s.start, s.end, io.ErrUnexpectedEOF)
				}
				return total, err
			}
			w, err := global.WriteAt(chunk, pos)
			if err == nil && w != len(chunk) {
				err = io.ErrShortWrite
			}
			if err != nil {
				return total, fmt.Errorf("writing [%d, %d) of the global file: %w", pos, pos+int64(len(chunk)), err)
			}
			pos += int64(len(chunk))
			total += int64(len(chunk))
		}
	}
	return total, nil
}

// RecoverOptions tune Recover.
type RecoverOptions struct {
	// DryRun lists what would be copied without copying.
	DryRun bool
	// Force copies even when the global file was replaced (another inode)
	// since the journal was written.
	Force bool
	// Open opens a global file; nil resolves the path's driver
	// (driver.Resolve) and opens it read-write without creating it.
	Open func(globalPath string) (driver.File, error)
}

// Recovered is the outcome for one journal.
type Recovered struct {
	Journal string
	Global  string
	Extents int   // journalled writes not covered by a checkpoint
	Bytes   int64 // bytes copied (or, with DryRun, to copy)
	// Status: "copied", "nothing to copy", "would copy", "skipped: ..." or
	// "failed: ...".
	Status string
	Err    error
}

// Recover completes global files from the caches in dir after a crash:
// for each journal (*.journal) not in use by a running open, the extents
// it lists that no checkpoint covers are copied from its cache file to
// the global file it names, the global file is synced, and the cache file
// and journal are deleted (or, if the cache was opened with discard
// disabled, the cache file is kept and the journal emptied). Journals of
// global files that were replaced since are skipped unless Force, and so
// are other users' journals (a shared directory holds them). A journal
// that is a symbolic link or not a regular file, or that names another
// cache file than the one beside it, another global file than its name
// was made from, or no device and inode, fails: its data is copied from
// nowhere and nothing is deleted. The error is non-nil if any journal
// failed; the others are still done.
func Recover(dir string, opts RecoverOptions) ([]Recovered, error) {
	names, err := filepath.Glob(filepath.Join(stripPrefixes(dir), "*.journal"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Recovered
	var errs []error
	for _, name := range names {
		r := recoverOne(name, opts)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, r.Err))
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func openGlobal(path string) (driver.File, error) {
	drv, p, err := driver.Resolve(path)
	if err != nil {
		return nil, err
	}
	return drv.Open(p, driver.OpenOptions{Flags: driver.ORdWr})
}

func recoverOne(name string, opts RecoverOptions) (r Recovered) {
	r.Journal = name
	fail := func(err error) Recovered {
		r.Err, r.Status = err, "failed: "+err.Error()
		return r
	}
	lk, err := lockJournal(name, false)
	if err != nil {
		if errors.Is(err, errJournalBusy) {
			r.Status = "skipped: in use by a running open"
			return r
		}
		var u *UnsafeError
		if errors.As(err, &u) && u.Owner >= 0 {
			r.Status = fmt.Sprintf("skipped: owned by uid %d, not by this user (uid %d)", u.Owner, os.Geteuid())
			return r
		}
		return fail(err)
	}
	defer lk.Close()
	b, err := io.ReadAll(lk)
	if err != nil {
		return fail(err)
	}
	info, hdrLen, err := parseJournal(b)
	if err != nil {
		return fail(err)
	}
	r.Global, r.Extents = info.Global, len(info.Pending)
	for _, s := range mergeRecords(info.Pending) {
		r.Bytes += s.end - s.start
	}
	cachePath, err := vetJournal(name, info)
	if err != nil {
		return fail(err)
	}
	if len(info.Pending) > 0 && identityOf(info.Global) != info.id && !opts.Force {
		r.Status = "skipped: the global file was replaced since (another inode); use -force to copy anyway"
		return r
	}
	if opts.DryRun {
		r.Status = "would copy"
		if len(info.Pending) == 0 {
			r.Status = "nothing to copy"
		}
		return r
	}
	if len(info.Pending) > 0 {
		open := opts.Open
		if open == nil {
			open = openGlobal
		}
		g, err := open(info.Global)
		if err != nil {
			return fail(err)
		}
		if r.Bytes, err = copyRecords(g, cachePath, info); err == nil {
			err = g.Sync()
		}
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(err)
		}
		r.Status = "copied"
	} else {
		r.Status = "nothing to copy"
	}
	if info.Discard {
		if err := removeLeftover(cachePath, "cache file"); err != nil {
			return fail(err)
		}
		if err := os.Remove(name); err != nil {
			return fail(err)
		}
		return r
	}
	if err := lk.Truncate(hdrLen); err != nil {
		return fail(err)
	}
	if err := lk.Sync(); err != nil {
		return fail(err)
	}
	return r
}
