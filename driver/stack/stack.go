// Package stack assembles the layers a file is opened through, so that
// adio holds one driver.File and finds what a layer offers with driver.As:
//
//   - the base driver: the one the path's prefix names, else the detected
//     file system's (driver.Resolve); a "faulty:" prefix puts fault
//     injection (package driver/faulty, rules from the collio_fault
//     hints) in front of the driver of the rest of the path;
//   - the I/O servers (package ioserver), when the file is opened on a
//     compute communicator of ioserver.Split: the files live on the
//     servers, which put the E10 cache under themselves;
//   - the E10 node-local cache (package cache) over each writing rank's
//     file, when e10_cache asks for it.
//
// Whether a file keeps its cache is a collective decision (a cache that
// fails on one rank is used on none), so OpenCache opens it on one rank
// and leaves the agreement, and the choice to Use or Drop it, to the
// caller.
package stack

import (
	"errors"

	"github.com/collio/collio/cache"
	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/ioserver"
)

// Stack opens the files of one path through its layers.
type Stack struct {
	drv     driver.Driver
	path    string // the path drv opens
	global  string // the path as the user gave it: the cache's key
	servers bool
	magic   uint32 // the file system's statfs magic, 0 when not asked
}

// Build resolves path, as the user gave it (driver prefixes allowed), for
// a file opened on communicator c. It also waits for deferred closes of
// path (e10_cache_deferred_close) still copying their cache, and returns
// their errors, so that a new open never races with that copy.
func Build(c comm.Comm, path string) (*Stack, error) {
	magic, err := Probe(path)
	if err != nil {
		return nil, err
	}
	if err := WaitDeferredCloses(path); err != nil {
		return nil, err
	}
	return BuildKnown(c, path, magic)
}

// Probe asks the file system that holds path for its statfs magic, which
// BuildKnown takes, so that in a collective open one rank asks for all
// (on NFS and FUSE each statfs is a round trip to the servers). A path
// with a driver prefix is not asked (0); its prefix is checked. The
// errors are Build's.
func Probe(path string) (uint32, error) { return driver.Probe(path) }

// BuildKnown is Build for a path whose file system's magic Probe returned
// (on any rank), after WaitDeferredCloses: it makes no system call. Its
// only errors are those of a path Probe rejects.
func BuildKnown(c comm.Comm, path string, magic uint32) (*Stack, error) {
	drv, p, err := driver.ResolveKnown(path, magic)
	if err != nil {
		return nil, err
	}
	s := &Stack{drv: drv, path: p, global: path, magic: magic}
	if session, ok := ioserver.SessionOf(c); ok {
		s.drv, s.servers = ioserver.NewDriver(session, drv), true
	}
	return s, nil
}

// WaitDeferredCloses waits for the deferred closes of path (any driver
// prefix) that are still copying their cache into it, and returns the
// errors of those not reported yet.
func WaitDeferredCloses(path string) error { return cache.WaitPath(path) }

// Driver is the driver that opens the files: the I/O servers' when
// Servers, else the base driver.
func (s *Stack) Driver() driver.Driver { return s.drv }

// Path is the path the driver is given (driver prefix removed).
func (s *Stack) Path() string { return s.path }

// Servers reports whether the files live on I/O servers.
func (s *Stack) Servers() bool { return s.servers }

// FSMagic is the statfs magic of the file system that holds the file, 0
// when it was not asked (a driver prefix chose the driver).
func (s *Stack) FSMagic() uint32 { return s.magic }

// Open opens one rank's file, without the cache (see OpenCache).
func (s *Stack) Open(opts driver.OpenOptions) (driver.File, error) {
	if opts.FSMagic == 0 {
		opts.FSMagic = s.magic
	}
	return s.drv.Open(s.path, opts)
}

// Delete deletes the file.
func (s *Stack) Delete() error { return s.drv.Delete(s.path) }

// OpenCache opens the E10 cache over this rank's file f when the hints
// ask for one (e10_cache enable or coherent); wanted is false, and c nil,
// when they do not, or when the files live on I/O servers. wanted depends
// only on the hints and the communicator, so it is the same on every rank
// when they are. f is nil on a rank that deferred its open: it gets no
// cache but must take part in the agreement on c's outcome. params go to
// the cache driver's open; warn receives the cache's warnings after open.
func (s *Stack) OpenCache(f driver.File, h *hints.Set, rank int, params map[string]string, warn func(string)) (c *Cache, wanted bool) {
	opts, on := cache.OptionsFromHints(h, s.global, rank)
	if !on || s.servers {
		return nil, false
	}
	opts.Params = params
	opts.Warn = warn
	c = &Cache{}
	if f != nil {
		c.f, c.err = cache.Open(f, opts)
	}
	return c, true
}

// Cache is the E10 cache opened over one rank's file, until the ranks
// agree on their outcomes: then every rank either uses it or drops it.
type Cache struct {
	f   *cache.File // nil where the open failed or no file was open
	err error
}

// Err is why the cache could not be opened on this rank.
func (c *Cache) Err() error { return c.err }

// Unsafe reports whether Err is a cache path that is not safe to use
// (cache.ErrUnsafe: a symbolic link or another user's file at a cache
// name, a planted journal), which may be an attack rather than a
// mishap.
func (c *Cache) Unsafe() bool { return errors.Is(c.err, cache.ErrUnsafe) }

// Use returns the cache over the rank's file, or nil where there is none
// (then the rank writes the file directly).
func (c *Cache) Use() driver.File {
	if c.f == nil {
		return nil
	}
	return c.f
}

// Drop gives the cache up before anything was written through it,
// leaving the file under it to the caller.
func (c *Cache) Drop() {
	if c.f != nil {
		c.f.Detach()
	}
}
