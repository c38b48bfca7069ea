package cache

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
)

// Policy says when cached extents are copied to the global file
// (e10_cache_flush_flag).
type Policy int

const (
	// FlushImmediate queues each extent for copying as its write lands.
	FlushImmediate Policy = iota
	// FlushOnClose queues the extents at Sync and Close.
	FlushOnClose
	// FlushNone keeps the data in the cache until Close; Sync only makes
	// the cache (and the global file's earlier data) durable.
	FlushNone
)

func (p Policy) String() string {
	switch p {
	case FlushImmediate:
		return hints.E10FlushImmediate
	case FlushOnClose:
		return hints.E10FlushOnClose
	case FlushNone:
		return hints.E10FlushNone
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// DefaultChunkSize is the copy chunk when Options.ChunkSize is 0 (ROMIO's
// ind_wr_buffer_size default).
const DefaultChunkSize = 512 << 10

// Options configure a cache File.
type Options struct {
	// GlobalPath names the global file as the user did, driver prefix
	// allowed ("sim:/scratch/out"). It is recorded in the journal for
	// collio recover (made absolute), names the cache file, and is the key
	// of WaitPath.
	GlobalPath string
	// Dir is the cache directory on the node-local device
	// (e10_cache_path), driver prefix allowed ("faulty:/local/cache");
	// "" means DefaultDir(), this user's own directory under
	// os.TempDir(). It is created (0700) if missing.
	Dir string
	// Rank is the opening rank; one cache file per rank and open.
	Rank int
	// Policy is when extents are copied (e10_cache_flush_flag).
	Policy Policy
	// Threads is the number of copy workers (e10_cache_threads); < 1 means 1.
	Threads int
	// ChunkSize is the copy unit in bytes (ind_wr_buffer_size); < 1 means
	// DefaultChunkSize.
	ChunkSize int64
	// Coherent holds an exclusive lock on each written extent of the global
	// file from the cached write until its copy is done (e10_cache=coherent).
	Coherent bool
	// Discard deletes the cache file and journal after a successful final
	// copy (e10_cache_discard_flag); otherwise the cache file stays.
	Discard bool
	// DeferredClose makes Close return at once while the copy finishes in
	// the background (e10_cache_deferred_close); WaitPath or WaitAll
	// collect the outcome.
	DeferredClose bool
	// Params are passed to the cache driver's Open (fault injection hints).
	Params map[string]string
	// CacheDriver opens the cache file; nil resolves Dir (driver.Resolve).
	CacheDriver driver.Driver
	// Warn receives warnings (a write-time fallback, a replayed journal);
	// nil discards them.
	Warn func(msg string)
}

// OptionsFromHints builds the options of a cache for globalPath on rank
// from effective hints, and reports whether e10_cache asks for a cache.
func OptionsFromHints(h *hints.Set, globalPath string, rank int) (Options, bool) {
	mode := h.String(hints.E10Cache)
	o := Options{
		GlobalPath:    globalPath,
		Dir:           h.String(hints.E10CachePath),
		Rank:          rank,
		Threads:       int(h.Int(hints.E10CacheThreads)),
		ChunkSize:     h.Int(hints.IndWrBufferSize),
		Coherent:      mode == hints.E10Coherent,
		Discard:       h.String(hints.E10CacheDiscardFlag) == hints.Enable,
		DeferredClose: h.String(hints.E10CacheDeferredClose) == hints.Enable,
		Params:        h.Map(),
	}
	switch h.String(hints.E10CacheFlushFlag) {
	case hints.E10FlushOnClose:
		o.Policy = FlushOnClose
	case hints.E10FlushNone:
		o.Policy = FlushNone
	}
	return o, mode == hints.Enable || mode == hints.E10Coherent
}

func (o Options) withDefaults() Options {
	if o.Threads < 1 {
		o.Threads = 1
	}
	if o.ChunkSize < 1 {
		o.ChunkSize = DefaultChunkSize
	}
	return o
}

// splitPrefix splits a leading driver prefix "name:" (name [a-z][a-z0-9]*,
// before any '/'), the rule driver.Resolve uses.
func splitPrefix(path string) (prefix, rest string, ok bool) {
	colon := strings.IndexByte(path, ':')
	if colon <= 0 || strings.Contains(path[:colon], "/") {
		return "", path, false
	}
	name := path[:colon]
	if name[0] < 'a' || name[0] > 'z' {
		return "", path, false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return "", path, false
		}
	}
	return name, path[colon+1:], true
}

// stripPrefixes returns path without its driver prefixes
// ("faulty:sim:/x" gives "/x"): the operating system's path.
func stripPrefixes(path string) string {
	for {
		_, rest, ok := splitPrefix(path)
		if !ok {
			return path
		}
		path = rest
	}
}

// dirPrefixes returns the driver prefixes of path ("faulty:sim:/x" gives
// "faulty:sim:").
func dirPrefixes(path string) string {
	return strings.TrimSuffix(path, stripPrefixes(path))
}

// canonicalPath keeps the driver prefixes and makes the rest absolute.
func canonicalPath(path string) (string, error) {
	prefixes := ""
	for {
		p, rest, ok := splitPrefix(path)
		if !ok {
			break
		}
		prefixes += p + ":"
		path = rest
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return prefixes + abs, nil
}

// pathKey identifies a global file for WaitPath: its absolute operating
// system path, whatever driver prefix was used.
func pathKey(globalPath string) string {
	p := stripPrefixes(globalPath)
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return filepath.Clean(p)
}

// Names returns the cache file (with Dir's driver prefix, for the cache
// driver) and journal (an operating-system path) that rank uses for
// globalPath in dir: "<base>.<hash>.r<rank>.cache" and ".journal", where
// base is the global file's name and hash tells apart files of the same
// name in different directories.
func Names(dir, globalPath string, rank int) (cachePath, journalPath string) {
	if dir == "" {
		dir = DefaultDir()
	}
	key := pathKey(globalPath)
	h := fnv.New32a()
	h.Write([]byte(key))
	stem := fmt.Sprintf("%s.%08x.r%d", filepath.Base(key), h.Sum32(), rank)
	prefix, osDir := "", dir
	for {
		p, rest, ok := splitPrefix(osDir)
		if !ok {
			break
		}
		prefix += p + ":"
		osDir = rest
	}
	return prefix + filepath.Join(osDir, stem+".cache"), filepath.Join(osDir, stem+".journal")
}

// identity is a file's device and inode, to notice that a global file was
// replaced (deleted and created again) since a journal was written.
type identity struct{ dev, ino uint64 }

func identityOf(globalPath string) identity {
	st, err := os.Stat(stripPrefixes(globalPath))
	if err != nil {
		return identity{}
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return identity{dev: uint64(s.Dev), ino: s.Ino}
	}
	return identity{}
}
