package driver

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// knownFSPrefixes are file-system prefixes that MPI-IO users write (as in
// ROMIO's "lustre:/path") whose driver may be missing from this build.
// They get a clearer error than a prefix nobody has heard of.
var knownFSPrefixes = map[string]bool{
	"ufs": true, "lustre": true, "beegfs": true, "sim": true,
	"nfs": true, "gpfs": true,
}

// Resolve picks the driver for a file name and returns the path to give it.
// A leading "name:" that names a registered driver selects that driver and
// is stripped ("ufs:/tmp/x" gives ufs and "/tmp/x"). Any other leading
// "[a-z][a-z0-9]*:" is an error naming the registered drivers. Without a
// prefix the file system is detected by statfs magic; when its driver is
// not registered, ufs is used, as ROMIO falls back to its generic driver.
func Resolve(path string) (Driver, string, error) {
	return defaultRegistry.resolve(path, 0)
}

// ResolveKnown is Resolve for a path whose file system's magic is known
// (FSMagic, asked by one rank for all): it makes no system call. A magic
// of 0 means unknown, and the file system is asked, as by Resolve.
func ResolveKnown(path string, magic uint32) (Driver, string, error) {
	return defaultRegistry.resolve(path, magic)
}

// Probe returns what ResolveKnown needs to resolve path without a system
// call: the statfs magic of its file system (FSMagic), or 0 for a path
// whose driver prefix chooses the driver. The errors are Resolve's.
func Probe(path string) (uint32, error) {
	if _, _, ok := splitFSPrefix(path); ok {
		_, _, err := defaultRegistry.resolve(path, 0) // checks the prefix only
		return 0, err
	}
	return FSMagic(path)
}

func (r *registry) resolve(path string, magic uint32) (Driver, string, error) {
	if prefix, rest, ok := splitFSPrefix(path); ok {
		if d, found := r.byName(prefix); found {
			return d, rest, nil
		}
		errno := unix.EINVAL
		if knownFSPrefixes[prefix] {
			errno = unix.EOPNOTSUPP
		}
		return nil, "", &ResolveError{Path: path, FS: prefix, Prefixed: true, Registered: r.names(), Err: errno}
	}
	if magic == 0 {
		var err error
		if magic, err = FSMagic(path); err != nil {
			return nil, "", err
		}
	}
	fsName := fsNameOf(magic)
	if d, found := r.byName(fsName); found {
		return d, path, nil
	}
	if d, found := r.byName("ufs"); found {
		return d, path, nil
	}
	return nil, "", &ResolveError{Path: path, FS: fsName, Registered: r.names(), Err: unix.EOPNOTSUPP}
}

// ResolveError says why Resolve found no driver. It unwraps to an errno
// so that the layers above classify it like any OS error: EINVAL for an
// unknown prefix, EOPNOTSUPP for a file system without a driver here.
type ResolveError struct {
	Path       string
	FS         string   // the prefix (without ':') or the detected file system
	Prefixed   bool     // FS came from a "name:" prefix rather than detection
	Registered []string // the drivers that are registered
	Err        syscall.Errno
}

func (e *ResolveError) Error() string {
	registered := "none"
	if len(e.Registered) > 0 {
		registered = strings.Join(e.Registered, ", ")
	}
	switch {
	case e.Prefixed && e.Err == unix.EINVAL:
		return fmt.Sprintf("%s: unknown file-system prefix %q (registered drivers: %s)", e.Path, e.FS+":", registered)
	case e.Prefixed:
		return fmt.Sprintf("%s: file-system prefix %q has no driver in this build (registered drivers: %s)",
			e.Path, e.FS+":", registered)
	}
	return fmt.Sprintf("%s: no driver for file system %q and no ufs fallback (registered drivers: %s); "+
		"import github.com/collio/collio/driver/ufs", e.Path, e.FS, registered)
}

func (e *ResolveError) Unwrap() error { return e.Err }

// splitFSPrefix splits "name:rest" when name matches [a-z][a-z0-9]* and
// comes before any '/', so "./a:b" and "/x/y:z" stay plain paths.
func splitFSPrefix(path string) (prefix, rest string, ok bool) {
	colon := strings.IndexByte(path, ':')
	if colon <= 0 {
		return "", "", false
	}
	name := path[:colon]
	if name[0] < 'a' || name[0] > 'z' {
		return "", "", false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return "", "", false
		}
	}
	return name, path[colon+1:], true
}
