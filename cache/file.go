package cache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collio/collio/driver"
	"golang.org/x/sys/unix"
)

// File is a driver.File over the global file whose writes land in a
// node-local cache file and are copied to the global file by background
// workers. The cache file is a sparse mirror: the cached bytes of global
// offset x sit at offset x of the cache file.
//
// Reads of ranges that overlap extents not yet copied take those parts
// from the cache, so a rank always reads what it wrote (two-phase's
// read-modify-write included). Data in other ranks' caches (including what a
// collective write routed through them for this rank) is visible once
// copied: after their Sync, or a collective call over the range (adio
// drains it first).
type File struct {
	global    driver.File
	cache     driver.File
	cachePath string // for the cache driver
	cacheDrv  driver.Driver
	journal   *journal
	opts      Options
	key       string // pathKey of the global file
	locks     *lockTable
	maxExtent int64

	mu       sync.Mutex
	cond     *sync.Cond // signalled on every change of the sets below
	held     []*extent  // written, not released (flush_onclose, flush_none)
	queue    []*extent  // released, waiting for a worker, in write order
	inflight []*extent  // being copied
	failed   []*extent  // copy failed: data only in the cache
	errs     []error    // copy errors not reported yet
	errExts  []*extent  // the extent of each of errs whose copy failed (nil for other errors)
	// unsynced bounds what reached the global file since its last sync
	// (copies, and writes through after a fallback): on a file system
	// whose clients cache per node, other nodes may not see it yet.
	unsynced span
	stopping bool
	closed   bool
	// adioLocks remembers whether each Lock taken through the File was
	// exclusive, for the matching Unlock.
	adioLocks map[[2]int64][]bool

	workers     sync.WaitGroup
	passthrough atomic.Bool
	fallback    sync.Once
	stats       statBox
}

// extent is a range of the global file whose data is in the cache.
type extent struct {
	span
	first, last uint64 // journal seqs of the writes it holds
	locks       []span // coherent locks to release once copied
	err         error  // why the last copy failed (in failed)
	reported    bool   // a copy error of this extent was returned by Sync
}

var (
	_ driver.File      = (*File)(nil)
	_ driver.WriteBack = (*File)(nil)
	_ driver.RunWriter = (*File)(nil)
	_ driver.RunReader = (*File)(nil)
)

// Open creates the cache over global (already open for writing) and starts
// its workers. Nothing is written to global until a write is copied. If a
// journal of an earlier open of the same file by the same rank holds
// extents that were never copied (the process died), they are copied to
// global first, with a warning, unless global was replaced since (then
// they are dropped, with a warning).
func Open(global driver.File, opts Options) (*File, error) {
	if global == nil {
		return nil, errors.New("cache: no global file")
	}
	if opts.GlobalPath == "" {
		return nil, errors.New("cache: GlobalPath is empty")
	}
	opts = opts.withDefaults()
	if opts.Coherent {
		// A lock held until Sync or Close would block, and could deadlock,
		// any other rank writing the range in a later collective call:
		// coherent extents are copied (and unlocked) as they land.
		opts.Policy = FlushImmediate
	}
	canon, err := canonicalPath(opts.GlobalPath)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	osDir, err := prepareDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	// The directory as the cache driver sees it (prefixes kept), absolute:
	// journals record the cache file's absolute path.
	opts.Dir = dirPrefixes(opts.Dir) + osDir
	cachePath, journalPath := Names(opts.Dir, canon, opts.Rank)
	osCache := stripPrefixes(cachePath)
	j, stale, err := openJournal(journalPath, canon, osCache, opts.Discard)
	if err != nil {
		return nil, cacheErr(err)
	}
	if stale != nil {
		if err := replayStale(global, canon, stale, journalPath, opts.Warn); err != nil {
			j.close(false)
			return nil, err
		}
		if err := j.reset(canon, osCache, opts.Discard); err != nil {
			j.close(false)
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	cf, dpath, drv, err := createCache(opts, cachePath)
	if err != nil {
		j.close(true)
		return nil, err
	}
	c := &File{
		global: global, cache: cf, cachePath: dpath, cacheDrv: drv, journal: j, opts: opts,
		key: pathKey(canon), locks: &lockTable{inner: global},
		maxExtent: max(8*opts.ChunkSize, 1<<20), adioLocks: make(map[[2]int64][]bool),
	}
	c.cond = sync.NewCond(&c.mu)
	for range opts.Threads {
		c.workers.Add(1)
		go c.worker()
	}
	return c, nil
}

// replayStale copies the extents an earlier open left in its journal,
// from the cache file beside the journal, once the journal is known to be
// this file's (vetJournal).
func replayStale(global driver.File, canon string, stale *journalInfo, journalPath string, warn func(string)) error {
	if pathKey(stale.Global) != pathKey(canon) {
		return fmt.Errorf("cache: journal %s belongs to %s, not %s; move it away or run collio recover", journalPath, stale.Global, canon)
	}
	cachePath, err := vetJournal(journalPath, stale)
	if err != nil {
		return err
	}
	if identityOf(canon) != stale.id {
		if warn != nil {
			warn(fmt.Sprintf("e10_cache: dropped %d unsynced extents of an earlier open left in %s: %s was replaced since", len(stale.Pending), journalPath, canon))
		}
		return nil
	}
	n, err := copyRecords(global, cachePath, stale)
	if errors.Is(err, ErrUnsafe) {
		return cacheErr(err)
	}
	if err != nil {
		return fmt.Errorf("cache: replaying journal %s of an earlier open that did not finish: %w", journalPath, err)
	}
	if err := global.Sync(); err != nil {
		return fmt.Errorf("cache: replaying journal %s: %w", journalPath, err)
	}
	if warn != nil {
		warn(fmt.Sprintf("e10_cache: copied %d bytes that an earlier open left in the cache (journal %s) to %s", n, journalPath, canon))
	}
	return nil
}

// createCache creates the cache file anew: what an earlier open of this
// user left at its name is deleted first (removeLeftover), and the file
// is created exclusively and without following a symbolic link, so that
// no write ever goes through a name someone else prepared.
func createCache(opts Options, cachePath string) (driver.File, string, driver.Driver, error) {
	osCache := stripPrefixes(cachePath)
	if err := removeLeftover(osCache, "cache file"); err != nil {
		return nil, "", nil, cacheErr(err)
	}
	drv, dpath := opts.CacheDriver, osCache
	if drv == nil {
		var err error
		if drv, dpath, err = driver.Resolve(cachePath); err != nil {
			return nil, "", nil, fmt.Errorf("cache: %w", err)
		}
	}
	cf, err := drv.Open(dpath, driver.OpenOptions{Flags: driver.ORdWr | driver.OCreate | driver.OExcl | unix.O_NOFOLLOW,
		Perm: 0o600, Params: opts.Params})
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, os.ErrExist):
		// Created between removeLeftover and the open: not ours.
		return nil, "", nil, unsafeErr(osCache, "the cache file's name was taken while it was being created")
	case err != nil:
		return nil, "", nil, fmt.Errorf("cache: opening the cache file: %w", err)
	}
	// O_EXCL made a new file; check the descriptor all the same where
	// the driver gives it.
	var st unix.Stat_t
	if raw, ok := driver.As[interface{ RawFD() (int, bool) }](cf); ok {
		if fd, ok := raw.RawFD(); ok {
			err = unix.Fstat(fd, &st)
		} else {
			err = unix.Lstat(osCache, &st)
		}
	} else {
		err = unix.Lstat(osCache, &st)
	}
	if err == nil {
		err = checkOwned(osCache, "cache file", &st)
	}
	if err != nil {
		cf.Close()
		return nil, "", nil, cacheErr(err)
	}
	return cf, dpath, drv, nil
}

// Unwrap returns the global file.
func (c *File) Unwrap() driver.File { return c.global }

// CachePath returns the cache file's path (as given to its driver).
func (c *File) CachePath() string { return c.cachePath }

// JournalPath returns the journal's path.
func (c *File) JournalPath() string { return c.journal.path }

func (c *File) record(s Stats) {
	c.stats.add(s)
	totals.add(s)
}

func (c *File) warn(msg string) {
	if c.opts.Warn != nil {
		c.opts.Warn(msg)
	}
}

// ---- writes ----

func (c *File) WriteAt(p []byte, off int64) (int, error) {
	return c.write(off, int64(len(p)), func(f driver.File) (int, error) { return f.WriteAt(p, off) })
}

func (c *File) WriteV(bufs [][]byte, off int64) (int, error) {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	return c.write(off, n, func(f driver.File) (int, error) { return f.WriteV(bufs, off) })
}

// write puts n bytes at off into the cache (do writes them to the file it
// is given): lock (coherent), reserve, write, journal, queue. When the
// cache cannot take them this rank falls back to the global file for good.
func (c *File) write(off, n int64, do func(driver.File) (int, error)) (int, error) {
	if n <= 0 || off < 0 || c.passthrough.Load() {
		k, err := do(c.global) // nothing to cache, or let the driver reject it
		if k > 0 {
			c.mu.Lock()
			c.noteUnsyncedLocked(span{off, off + int64(k)})
			c.mu.Unlock()
		}
		return k, err
	}
	s := span{off, off + n}
	if c.opts.Coherent {
		if err := c.locks.Lock(off, n, true); err != nil {
			return 0, err
		}
	}
	undo := func() {
		if c.opts.Coherent {
			c.locks.Unlock(off, n, true)
		}
	}
	if err := c.cache.Allocate(off, n); err != nil {
		undo()
		return c.fallBack("reserving space in the cache file", err, do)
	}
	k, err := do(c.cache)
	if err == nil && int64(k) != n {
		err = io.ErrShortWrite
	}
	if err != nil {
		undo()
		return c.fallBack("writing the cache file", err, do)
	}
	// Journal and queue under one lock, so that a checkpoint never covers
	// a record whose extent is not queued yet.
	c.mu.Lock()
	seq, err := c.journal.append(off, n)
	if err == nil {
		c.enqueueLocked(s, seq, c.opts.Coherent)
	}
	c.mu.Unlock()
	if err != nil {
		undo()
		return c.fallBack("writing the cache journal", err, do)
	}
	c.record(Stats{CachedBytes: n})
	return int(n), nil
}

// fallBack switches this rank to writing the global file directly
// (stopCaching; copy errors stay for the next Sync or Close), then writes
// through.
func (c *File) fallBack(what string, cause error, do func(driver.File) (int, error)) (int, error) {
	c.stopCaching(fmt.Sprintf("e10_cache: %s failed (%v); this rank writes %s directly from now on, the others from their next collective call",
		what, cause, c.opts.GlobalPath))
	return do(c.global)
}

// FellBack reports whether the cache gave up and writes the global file
// directly (driver.WriteBack).
func (c *File) FellBack() bool { return c.passthrough.Load() }

// FallBack makes the cache write the global file directly from now on, as
// when its own reservation fails (driver.WriteBack); adio calls it on
// every rank once any rank fell back, so that the ranks agree on whether
// the cache is in use.
func (c *File) FallBack() { c.stopCaching("") }

// stopCaching switches to writing through, once: what the cache holds is
// copied and made durable first, and the journal checkpointed, so that
// neither a copy nor a recovery can later overwrite the direct writes.
func (c *File) stopCaching(warning string) {
	c.fallback.Do(func() {
		c.passthrough.Store(true)
		c.record(Stats{Fallback: true})
		if warning != "" {
			c.warn(warning)
		}
		c.mu.Lock()
		c.releaseLocked(true)
		c.waitLocked()
		safe := c.safeSeqLocked()
		c.mu.Unlock()
		if err := c.syncGlobal(); err != nil {
			c.addErr(err)
			return
		}
		if err := c.journal.checkpoint(safe); err != nil {
			c.addErr(fmt.Errorf("cache: journal checkpoint: %w", err))
		}
	})
}

func (c *File) addErr(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.errExts = append(c.errExts, nil)
	c.mu.Unlock()
}

// enqueueLocked adds a written range: split into extents of at most
// maxExtent (so that several workers share a large write), each merged
// into the last unstarted extent when they touch.
func (c *File) enqueueLocked(s span, seq uint64, locked bool) {
	list := &c.held
	if c.opts.Policy == FlushImmediate {
		list = &c.queue
	}
	for pos := s.start; pos < s.end; {
		piece := span{pos, min(s.end, pos+c.maxExtent)}
		pos = piece.end
		if n := len(*list); n > 0 {
			t := (*list)[n-1]
			if piece.start <= t.end && t.start <= piece.end && max(t.end, piece.end)-min(t.start, piece.start) <= c.maxExtent {
				t.start, t.end = min(t.start, piece.start), max(t.end, piece.end)
				t.last = seq
				if locked {
					t.locks = append(t.locks, piece)
				}
				continue
			}
		}
		e := &extent{span: piece, first: seq, last: seq}
		if locked {
			e.locks = []span{piece}
		}
		*list = append(*list, e)
	}
	if list == &c.queue {
		c.cond.Broadcast()
	}
}

// releaseLocked queues the held extents for copying (flush_onclose at
// Sync; every policy at Close and Truncate when all is true).
func (c *File) releaseLocked(all bool) {
	if c.opts.Policy == FlushNone && !all {
		return
	}
	if len(c.held) > 0 {
		c.queue = append(c.queue, c.held...)
		c.held = nil
		c.cond.Broadcast()
	}
}

// waitLocked waits until nothing is queued or being copied.
func (c *File) waitLocked() {
	for len(c.queue) > 0 || len(c.inflight) > 0 {
		c.cond.Wait()
	}
}

// safeSeqLocked is the largest seq such that every write up to it has
// been copied (or dropped by Truncate): what a checkpoint may cover once
// the global file is synced.
func (c *File) safeSeqLocked() uint64 {
	safe := c.journal.lastSeq()
	for _, l := range [][]*extent{c.held, c.queue, c.inflight, c.failed} {
		for _, e := range l {
			safe = min(safe, e.first-1)
		}
	}
	return safe
}

// takeErrsLocked returns the copy errors not reported yet, as one error.
func (c *File) takeErrsLocked() error {
	errs := c.errs
	for _, e := range c.errExts {
		if e != nil {
			e.reported = true
		}
	}
	c.errs, c.errExts = nil, nil
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &CopyErrors{Errs: errs}
}

// dropReportedLocked forgets the copy errors of extents that a Sync
// already reported as failed.
func (c *File) dropReportedLocked() {
	keep := 0
	for i, e := range c.errExts {
		if e == nil || !e.reported {
			c.errs[keep], c.errExts[keep] = c.errs[i], e
			keep++
		}
	}
	clear(c.errs[keep:])
	c.errs, c.errExts = c.errs[:keep], c.errExts[:keep]
}

// requeueFailedLocked puts the extents whose copy failed back in line:
// they are retried by the next Sync or Close (right away with
// flush_immediate).
func (c *File) requeueFailedLocked() {
	if len(c.failed) == 0 {
		return
	}
	back := c.failed
	c.failed = nil
	if c.opts.Policy == FlushImmediate {
		c.queue = append(back, c.queue...)
		c.cond.Broadcast()
	} else {
		c.held = append(back, c.held...)
	}
}

// CopyErrors are several copy failures reported by one Sync or Close.
// It unwraps to each, so the first's class (ENOSPC, EIO) decides how
// collio reports it.
type CopyErrors struct{ Errs []error }

func (e *CopyErrors) Error() string {
	return fmt.Sprintf("%d copies to the global file failed; first: %v", len(e.Errs), e.Errs[0])
}

func (e *CopyErrors) Unwrap() []error { return e.Errs }

// CopyError is a failed copy of one extent to the global file.
type CopyError struct {
	Off, Len int64
	Cache    string // the cache file that still holds the data
	Step     string // "reading the cache" or "writing the global file"
	Err      error
}

func (e *CopyError) Error() string {
	return fmt.Sprintf("e10 cache: copying bytes [%d, %d) to the global file: %s: %v (the data stays in %s)",
		e.Off, e.Off+e.Len, e.Step, e.Err, e.Cache)
}

func (e *CopyError) Unwrap() error { return e.Err }

// ---- workers ----

// worker copies queued extents; it sleeps on the condition variable when
// there is nothing it may copy.
func (c *File) worker() {
	defer c.workers.Done()
	buf := make([]byte, c.opts.ChunkSize)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		e := c.nextLocked()
		if e == nil {
			if c.stopping {
				return
			}
			c.cond.Wait()
			continue
		}
		c.mu.Unlock()
		start := time.Now()
		err := c.copyExtent(e, buf)
		took := time.Since(start)
		if err == nil {
			for _, l := range e.locks {
				c.locks.Unlock(l.start, l.end-l.start, true)
			}
			e.locks = nil
			c.record(Stats{CopiedBytes: e.end - e.start, Copies: 1, CopyTime: took})
		} else {
			c.record(Stats{CopyErrors: 1, CopyTime: took})
		}
		c.mu.Lock()
		c.inflight = slices.DeleteFunc(c.inflight, func(x *extent) bool { return x == e })
		c.noteUnsyncedLocked(e.span) // a failed copy may have written part
		if err != nil {
			e.err = err
			c.failed = append(c.failed, e)
			c.errs = append(c.errs, err)
			c.errExts = append(c.errExts, e)
		}
		c.cond.Broadcast()
	}
}

// scanLimit bounds how far into the queue a worker looks for an extent
// that overlaps nothing before it.
const scanLimit = 64

// nextLocked takes the first queued extent that overlaps neither an
// extent being copied nor an earlier queued one: overlapping extents are
// copied one after the other in write order, others in parallel.
func (c *File) nextLocked() *extent {
	for i := 0; i < min(len(c.queue), scanLimit); i++ {
		e := c.queue[i]
		if overlapsAny(c.inflight, e.span) || overlapsAny(c.queue[:i], e.span) {
			continue
		}
		if i == 0 {
			c.queue[0] = nil
			c.queue = c.queue[1:]
		} else {
			c.queue = slices.Delete(c.queue, i, i+1)
		}
		c.inflight = append(c.inflight, e)
		return e
	}
	return nil
}

func overlapsAny(list []*extent, s span) bool {
	for _, e := range list {
		if e.overlaps(s) {
			return true
		}
	}
	return false
}

// copyExtent copies e from the cache to the global file in chunks. It
// reads the cache as it is now, so a later write to the same range, if
// already there, is copied too (and again by its own extent): the global
// file ends with the newest data.
func (c *File) copyExtent(e *extent, buf []byte) error {
	for pos := e.start; pos < e.end; {
		n := min(int64(len(buf)), e.end-pos)
		chunk := buf[:n]
		k, err := c.cache.ReadAt(chunk, pos)
		if err != nil && !(errors.Is(err, io.EOF) && int64(k) == n) {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the cache file ends at %d: %w", pos+int64(k), io.ErrUnexpectedEOF)
			}
			return &CopyError{Off: e.start, Len: e.end - e.start, Cache: c.cachePath, Step: "reading the cache", Err: err}
		}
		w, err := c.global.WriteAt(chunk, pos)
		if err == nil && int64(w) != n {
			err = io.ErrShortWrite
		}
		if err != nil {
			return &CopyError{Off: e.start, Len: e.end - e.start, Cache: c.cachePath, Step: "writing the global file", Err: err}
		}
		pos += n
	}
	return nil
}

// ---- reads ----

// cachedLocked returns the parts of s that must be read from the cache
// (sorted, disjoint) and the end of the furthest extent not copied yet.
func (c *File) cachedLocked(s span) ([]span, int64) {
	var parts []span
	var end int64
	for _, l := range [][]*extent{c.held, c.queue, c.inflight, c.failed} {
		for _, e := range l {
			end = max(end, e.end)
			if e.overlaps(s) {
				parts = append(parts, span{max(e.start, s.start), min(e.end, s.end)})
			}
		}
	}
	slices.SortFunc(parts, func(a, b span) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	out := parts[:0]
	for _, p := range parts {
		if n := len(out); n > 0 && p.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, p.end)
			continue
		}
		out = append(out, p)
	}
	return out, end
}

// ReadAt reads from the global file, taking the parts that overlap
// extents not copied yet from the cache. Bytes of a hole below the end of
// such an extent read as zeros; past the end of both it is io.EOF.
func (c *File) ReadAt(p []byte, off int64) (int, error) {
	n := int64(len(p))
	if n == 0 || off < 0 {
		return c.global.ReadAt(p, off)
	}
	c.mu.Lock()
	parts, pendEnd := c.cachedLocked(span{off, off + n})
	c.mu.Unlock()
	if len(parts) == 0 {
		k, err := c.global.ReadAt(p, off)
		if errors.Is(err, io.EOF) && pendEnd > off+int64(k) {
			// The file ends, for this rank, at pendEnd.
			fill := min(pendEnd, off+n) - off
			clear(p[k:fill])
			if fill == n {
				return int(n), nil
			}
			return int(fill), io.EOF
		}
		return k, err
	}
	pos := off
	fromGlobal := func(end int64) error {
		b := p[pos-off : end-off]
		k, err := c.global.ReadAt(b, pos)
		if errors.Is(err, io.EOF) {
			clear(b[k:]) // a hole before cached data
			err = nil
		}
		return err
	}
	for _, part := range parts {
		if pos < part.start {
			if err := fromGlobal(part.start); err != nil {
				return int(pos - off), err
			}
		}
		b := p[part.start-off : part.end-off]
		k, err := c.cache.ReadAt(b, part.start)
		if errors.Is(err, io.EOF) {
			clear(b[k:])
			err = nil
		}
		if err != nil {
			return int(part.start - off), err
		}
		pos = part.end
	}
	if pos < off+n {
		b := p[pos-off:]
		k, err := c.global.ReadAt(b, pos)
		if errors.Is(err, io.EOF) {
			end := max(pos+int64(k), min(pendEnd, off+n))
			clear(p[pos-off+int64(k) : end-off])
			if end == off+n {
				return int(n), nil
			}
			return int(end - off), io.EOF
		}
		if err != nil {
			return int(pos - off), err
		}
	}
	return int(n), nil
}

// ReadV reads the buffers one after another from off.
func (c *File) ReadV(bufs [][]byte, off int64) (int, error) {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	c.mu.Lock()
	parts, pendEnd := c.cachedLocked(span{off, off + n})
	c.mu.Unlock()
	if len(parts) == 0 && pendEnd <= off {
		return c.global.ReadV(bufs, off)
	}
	return driver.ReadVAt(c, bufs, off)
}

// Size is the global file's size, or the end of the furthest extent not
// copied yet if that is beyond it.
func (c *File) Size() (int64, error) {
	// Uncopied extents first: one that a worker finishes meanwhile is in
	// the global file by the time its size is asked. (In the other order a
	// copy landing between the two steps was seen by neither.)
	c.mu.Lock()
	_, pendEnd := c.cachedLocked(span{})
	c.mu.Unlock()
	size, err := c.global.Size()
	if err != nil {
		return 0, err
	}
	return max(size, pendEnd), nil
}

// ---- sync, truncate, locks ----

// Sync waits for the copies (queuing the held extents first, except with
// flush_none), then syncs the global file and checkpoints the journal. It
// returns every copy error since the last Sync or Close; the failed
// extents stay in the cache and are retried by the next Sync or Close.
// With flush_none nothing is copied: the cache file and the journal are
// fsync'd instead, so the data is durable on the node.
func (c *File) Sync() error {
	start := time.Now()
	c.mu.Lock()
	c.releaseLocked(false)
	c.waitLocked()
	copyErr := c.takeErrsLocked()
	safe := c.safeSeqLocked()
	c.requeueFailedLocked()
	c.mu.Unlock()
	c.record(Stats{SyncWait: time.Since(start), Syncs: 1})
	var localErr error
	if c.opts.Policy == FlushNone && !c.passthrough.Load() {
		if localErr = c.cache.Sync(); localErr == nil {
			localErr = c.journal.sync()
		}
		if localErr != nil {
			localErr = fmt.Errorf("e10 cache: making the cache durable: %w", localErr)
		}
	}
	gerr := c.syncGlobal()
	if copyErr == nil && gerr == nil {
		if err := c.journal.checkpoint(safe); err != nil {
			localErr = errors.Join(localErr, fmt.Errorf("e10 cache: journal checkpoint: %w", err))
		}
	}
	for _, err := range []error{copyErr, gerr, localErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Drain copies everything the cache holds, whatever the policy, and waits
// for it; copy errors are kept for the next Sync or Close
// (driver.WriteBack). adio calls it on every rank before a collective
// set_size.
func (c *File) Drain() {
	c.mu.Lock()
	c.releaseLocked(true)
	c.waitLocked()
	c.mu.Unlock()
}

// DrainRanges copies what the cache holds inside any of the ranges
// ([start, end) pairs), whatever the policy, and waits for those copies
// (driver.WriteBack).
// Extents whose copy failed before are retried. If data of the ranges is
// still only in the cache afterwards, the copy error is returned (and, as
// always, reported again by the next Sync or Close).
//
// adio calls it before a collective transfer over ranges some rank's
// cache holds: that call's aggregators may not be the ranks that cached
// the data, and they read, and write, the global file; without the drain
// a collective read could see stale bytes and an older cached extent
// could be copied over a newer write.
func (c *File) DrainRanges(ranges [][2]int64) error {
	began := time.Now()
	in := func(e *extent) bool {
		for _, r := range ranges {
			if e.overlaps(span{r[0], r[1]}) {
				return true
			}
		}
		return false
	}
	anyIn := func(list []*extent) bool { return slices.ContainsFunc(list, in) }
	c.mu.Lock()
	defer c.mu.Unlock()
	if !anyIn(c.held) && !anyIn(c.queue) && !anyIn(c.inflight) && !anyIn(c.failed) {
		return nil
	}
	moved := false
	for _, list := range []*[]*extent{&c.failed, &c.held} {
		kept := (*list)[:0]
		for _, e := range *list {
			if in(e) {
				c.queue = append(c.queue, e)
				moved = true
			} else {
				kept = append(kept, e)
			}
		}
		clear((*list)[len(kept):])
		*list = kept
	}
	if moved {
		c.cond.Broadcast()
	}
	for anyIn(c.queue) || anyIn(c.inflight) {
		c.cond.Wait()
	}
	c.record(Stats{DrainWait: time.Since(began), Drains: 1})
	for _, e := range c.failed {
		if in(e) {
			return e.err
		}
	}
	return nil
}

func (c *File) noteUnsyncedLocked(s span) {
	if s.end <= s.start {
		return
	}
	if c.unsynced.end <= c.unsynced.start {
		c.unsynced = s
		return
	}
	c.unsynced = span{min(c.unsynced.start, s.start), max(c.unsynced.end, s.end)}
}

// syncGlobal syncs the global file and forgets what was unsynced when it
// began; copies landing meanwhile stay unsynced.
func (c *File) syncGlobal() error {
	c.mu.Lock()
	was := c.unsynced
	c.unsynced = span{}
	c.mu.Unlock()
	err := c.global.Sync()
	if err != nil {
		c.mu.Lock()
		c.noteUnsyncedLocked(was)
		c.mu.Unlock()
	}
	return err
}

// Unsynced returns the bounds [start, end) of the data the cache holds
// back or copied to the global file since that file's last sync: what
// another node's client may not see yet (driver.WriteBack).
func (c *File) Unsynced() (start, end int64) {
	start, end = c.Pending()
	c.mu.Lock()
	u := c.unsynced
	c.mu.Unlock()
	switch {
	case u.end <= u.start:
		return start, end
	case end <= start:
		return u.start, u.end
	}
	return min(start, u.start), max(end, u.end)
}

// SyncCopies syncs the global file, so that every node sees what was
// copied to it so far (driver.WriteBack).
func (c *File) SyncCopies() error { return c.syncGlobal() }

// Pending returns the bounds [start, end) of the data the cache holds
// that is not copied to the global file yet; start == end when there is
// none (driver.WriteBack).
func (c *File) Pending() (start, end int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := true
	for _, l := range [][]*extent{c.held, c.queue, c.inflight, c.failed} {
		for _, e := range l {
			if first || e.start < start {
				start = e.start
			}
			if first || e.end > end {
				end = e.end
			}
			first = false
		}
	}
	return start, end
}

// Truncate copies what the cache holds, then truncates the global file
// and the cache file; extents past size that failed to copy are dropped.
func (c *File) Truncate(size int64) error {
	if size < 0 {
		return c.global.Truncate(size)
	}
	c.mu.Lock()
	c.releaseLocked(true)
	c.waitLocked()
	c.dropFailedPastLocked(size)
	safe := c.safeSeqLocked()
	c.mu.Unlock()
	if err := c.global.Truncate(size); err != nil {
		return err
	}
	c.cache.Truncate(size) // a sparse mirror; a failure costs only space
	// A recovery must not replay writes past the new end.
	if err := c.syncGlobal(); err != nil {
		return err
	}
	return c.journal.checkpoint(safe)
}

// dropFailedPastLocked forgets the failed copies past size.
func (c *File) dropFailedPastLocked(size int64) {
	kept := c.failed[:0]
	for _, e := range c.failed {
		if e.start < size {
			e.end = min(e.end, size)
			kept = append(kept, e)
		}
	}
	clear(c.failed[len(kept):])
	c.failed = kept
}

// DropPast forgets the failed copies past size, as Truncate does, without
// truncating anything (driver.WriteBack): adio calls it on the ranks other
// than the one that truncates the global file, so that no retry (at Sync
// or Close, or by collio recover) writes past the new end the bytes that
// were cut off. What was copied is synced first, so the journal can say
// so.
func (c *File) DropPast(size int64) error {
	if size < 0 {
		return nil
	}
	c.mu.Lock()
	c.dropFailedPastLocked(size)
	safe := c.safeSeqLocked()
	c.mu.Unlock()
	if err := c.syncGlobal(); err != nil {
		return err
	}
	return c.journal.checkpoint(safe)
}

// Allocate reserves space in the global file.
func (c *File) Allocate(off, length int64) error { return c.global.Allocate(off, length) }

// Lock locks a range of the global file. Locks are counted together with
// the cache's own (coherent mode), so one holder's Unlock never releases
// a range another still holds.
func (c *File) Lock(off, length int64, exclusive bool) error {
	if err := c.locks.Lock(off, length, exclusive); err != nil {
		return err
	}
	c.mu.Lock()
	k := [2]int64{off, length}
	c.adioLocks[k] = append(c.adioLocks[k], exclusive)
	c.mu.Unlock()
	return nil
}

// Unlock releases a range locked with Lock.
func (c *File) Unlock(off, length int64) error {
	c.mu.Lock()
	k := [2]int64{off, length}
	held := c.adioLocks[k]
	exclusive := false
	if n := len(held); n > 0 {
		exclusive = held[n-1]
		if n == 1 {
			delete(c.adioLocks, k)
		} else {
			c.adioLocks[k] = held[:n-1]
		}
	}
	c.mu.Unlock()
	return c.locks.Unlock(off, length, exclusive)
}

// Layout is the global file's.
func (c *File) Layout() driver.Layout { return c.global.Layout() }

// ---- close ----

// Close copies everything the cache holds (retrying extents that failed
// before), waits, syncs and closes the global file, and removes the cache
// file and journal (discard) or keeps the cache file. If a copy failed,
// the cache file and journal stay and the error says where; collio
// recover can complete the global file later. With DeferredClose it
// returns nil at once and does all this in the background; WaitPath and
// WaitAll report the outcome.
func (c *File) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &os.PathError{Op: "close", Path: c.cachePath, Err: os.ErrClosed}
	}
	c.closed = true
	c.mu.Unlock()
	if c.opts.DeferredClose {
		p := registerClose(c.key)
		go func() { p.finish(c.finish()) }()
		return nil
	}
	return c.finish()
}

func (c *File) finish() error {
	start := time.Now()
	c.mu.Lock()
	// Copies under way now (flush_immediate retries failed extents right
	// after a Sync) may have met a cause fixed since, such as a full file
	// system with space freed: let them end, then retry what failed.
	c.waitLocked()
	c.requeueFailedLocked()
	c.releaseLocked(true)
	c.waitLocked()
	// Every error not reported yet, including failures whose retry just
	// succeeded: an error is never dropped. Once every extent is copied,
	// the failed retries of extents whose failure a Sync already returned
	// are not news (flush_immediate retries right after that Sync, so on a
	// file system still full the retry fails again before space is freed).
	failed := len(c.failed)
	if failed == 0 {
		c.dropReportedLocked()
	}
	copyErr := c.takeErrsLocked()
	c.stopping = true
	c.cond.Broadcast()
	c.mu.Unlock()
	c.workers.Wait()
	c.record(Stats{CloseWait: time.Since(start)})

	var syncErr error
	if failed == 0 {
		syncErr = c.syncGlobal()
	}
	closeErr := c.global.Close() // also drops coherent locks still held
	ok := failed == 0 && syncErr == nil
	cacheCloseErr := c.cache.Close()
	var localErr error
	switch {
	case ok && c.opts.Discard:
		if err := c.cacheDrv.Delete(c.cachePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			localErr = err
		}
		if err := c.journal.close(true); err != nil && localErr == nil {
			localErr = err
		}
	case ok:
		// Keep the cache file; the journal says nothing is pending.
		err := c.journal.checkpoint(c.journal.lastSeq())
		if cerr := c.journal.close(false); err == nil {
			err = cerr
		}
		localErr = err
	default:
		c.journal.sync()
		c.journal.close(false)
	}
	if !ok {
		err := copyErr
		if err == nil {
			err = syncErr
		}
		if errors.As(err, new(*CopyError)) || errors.As(err, new(*CopyErrors)) {
			// The copy error already names the cache file.
			return fmt.Errorf("%w; journal %s: run `collio recover %s` once the cause is fixed",
				err, c.journal.path, stripPrefixes(c.opts.Dir))
		}
		return fmt.Errorf("%w; the data not copied stays in %s (journal %s): run `collio recover %s` once the cause is fixed",
			err, c.cachePath, c.journal.path, stripPrefixes(c.opts.Dir))
	}
	for _, err := range []error{copyErr, closeErr, cacheCloseErr, localErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Detach gives up the cache before anything was written (adio does so
// when another rank could not open its cache): it stops the workers,
// deletes the cache file and journal, and leaves the global file open for
// the caller, who owns it again.
func (c *File) Detach() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &os.PathError{Op: "close", Path: c.cachePath, Err: os.ErrClosed}
	}
	c.closed, c.stopping = true, true
	if len(c.held)+len(c.queue)+len(c.inflight)+len(c.failed) > 0 {
		c.mu.Unlock()
		return errors.New("cache: Detach after writes")
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	c.workers.Wait()
	err := c.cache.Close()
	if derr := c.cacheDrv.Delete(c.cachePath); err == nil && !errors.Is(derr, os.ErrNotExist) {
		err = derr
	}
	if jerr := c.journal.close(true); err == nil {
		err = jerr
	}
	return err
}
