package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Cache directories may be shared (a 1777 node-local scratch), and the
// names in them are predictable, so nothing found there is trusted: cache
// files and journals are created exclusively and without following
// symbolic links, whatever already exists at their names must be a
// regular file of this user (checked on the open descriptor), and a
// journal only ever leads to the cache file beside it.

// ErrUnsafe is wrapped by the errors of cache directories, cache files
// and journals that collio refuses to use: the path is not what collio
// would have made there for this user.
var ErrUnsafe = errors.New("unsafe E10 cache file")

// UnsafeError names a cache directory, cache file or journal that collio
// refuses, and why. It wraps ErrUnsafe.
type UnsafeError struct {
	Path   string
	Reason string
	// Owner is the uid owning Path when that is the reason, else -1.
	Owner int
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("cache: refusing %s: %s", e.Path, e.Reason)
}

func (e *UnsafeError) Unwrap() error { return ErrUnsafe }

// cacheErr prefixes err with "cache: ", but gives an UnsafeError as it
// is: it names the path and reason, and says "cache" already.
func cacheErr(err error) error {
	var u *UnsafeError
	if errors.As(err, &u) {
		return u
	}
	return fmt.Errorf("cache: %w", err)
}

func unsafeErr(path, format string, args ...any) *UnsafeError {
	return &UnsafeError{Path: path, Reason: fmt.Sprintf(format, args...), Owner: -1}
}

// DefaultDir is the cache directory when e10_cache_path is empty: a
// directory of this user's own under os.TempDir(), which is shared by
// every user of the node.
func DefaultDir() string {
	return filepath.Join(os.TempDir(), "collio-e10-"+strconv.Itoa(os.Geteuid()))
}

// prepareDir returns the absolute operating-system path of the cache
// directory dir (driver prefixes removed; "" is DefaultDir), creating it
// (0700) if missing. The default directory must be a directory of this
// user that no one else can write to, not a symbolic link: anyone can
// create that name first. An explicit directory is the user's choice and
// may be shared, but not writable by all without the sticky bit, where
// other users could delete or rename this user's cache files.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		d := DefaultDir()
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cache: cache directory: %w", err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return "", fmt.Errorf("cache: cache directory: %w", &os.PathError{Op: "lstat", Path: d, Err: err})
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return "", unsafeErr(d, "the default cache directory is a symbolic link; remove it or set e10_cache_path")
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return "", unsafeErr(d, "the default cache directory is not a directory; remove it or set e10_cache_path")
		case int(st.Uid) != os.Geteuid():
			return "", &UnsafeError{Path: d, Owner: int(st.Uid), Reason: fmt.Sprintf(
				"the default cache directory is owned by uid %d, not by this user (uid %d); remove it or set e10_cache_path",
				st.Uid, os.Geteuid())}
		case st.Mode&0o022 != 0:
			return "", unsafeErr(d, "the default cache directory is writable by other users (mode %04o); make it 0700 or set e10_cache_path",
				st.Mode&0o7777)
		}
		return d, nil
	}
	d, err := filepath.Abs(stripPrefixes(dir))
	if err != nil {
		return "", fmt.Errorf("cache: cache directory: %w", err)
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("cache: cache directory: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(d, &st); err != nil {
		return "", fmt.Errorf("cache: cache directory: %w", &os.PathError{Op: "stat", Path: d, Err: err})
	}
	if st.Mode&0o002 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return "", unsafeErr(d, "the cache directory (e10_cache_path) is writable by every user without the sticky bit (mode %04o): anyone could replace the cache files; use chmod +t or a private directory",
			st.Mode&0o7777)
	}
	return d, nil
}

// checkOwned says why a file found at path (st, from fstat or lstat) is
// not one collio may use as this user's cache file or journal.
func checkOwned(path, what string, st *unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		return unsafeErr(path, "the %s is a symbolic link", what)
	default:
		return unsafeErr(path, "the %s is not a regular file (mode %07o)", what, st.Mode)
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		return &UnsafeError{Path: path, Owner: int(st.Uid), Reason: fmt.Sprintf(
			"the %s is owned by uid %d, not by this user (uid %d)", what, st.Uid, euid)}
	}
	if st.Nlink > 1 {
		return unsafeErr(path, "the %s has %d hard links", what, st.Nlink)
	}
	return nil
}

// openOwned opens path (flags: access mode and O_CREAT|O_EXCL if wanted)
// without following a symbolic link, and checks on the descriptor that it
// is a regular file of this user with one link. A FIFO or device at the
// name cannot block the open (O_NONBLOCK, cleared after the check).
func openOwned(path, what string, flags int, perm uint32) (*os.File, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, perm)
		if err != unix.EINTR {
			break
		}
	}
	if err == unix.ELOOP {
		return nil, unsafeErr(path, "the %s is a symbolic link", what)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := checkOwned(path, what, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// removeLeftover deletes what an earlier open of this user left at path
// (a cache file kept by e10_cache_discard_flag=disable, or one a crash
// left), so that the cache file can be created anew, exclusively. Anything
// else at the name is refused.
func removeLeftover(path, what string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if err := checkOwned(path, what, &st); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// journalCache returns the cache file that belongs to the journal at
// path: the one beside it with the same stem. A journal is never trusted
// to name another file.
func journalCache(path string) string {
	return strings.TrimSuffix(path, ".journal") + ".cache"
}

// vetJournal checks what a journal says against where it lies: it names
// the cache file beside it, the global file that its name was made from,
// and the device and inode of that global file (collio always records
// them, and without them a replaced global file would go unnoticed). It
// returns the cache file to copy from.
func vetJournal(path string, info *journalInfo) (string, error) {
	if info.id == (identity{}) {
		return "", unsafeErr(path, "the journal records no device and inode of its global file %s (collio always does)", info.Global)
	}
	want := journalCache(path)
	if filepath.Base(info.Cache) != filepath.Base(want) || !sameDir(filepath.Dir(info.Cache), filepath.Dir(want)) {
		return "", unsafeErr(path, "the journal names the cache file %s, not %s beside it", info.Cache, want)
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".journal")
	rank := -1
	if i := strings.LastIndex(stem, ".r"); i >= 0 {
		if r, err := strconv.Atoi(stem[i+2:]); err == nil {
			rank = r
		}
	}
	if rank < 0 {
		return "", unsafeErr(path, "the journal's name is not <file>.<hash>.r<rank>.journal")
	}
	if _, j := Names(filepath.Dir(path), info.Global, rank); filepath.Base(j) != filepath.Base(path) {
		return "", unsafeErr(path, "the journal names the global file %s, whose journal would be %s", info.Global, filepath.Base(j))
	}
	return want, nil
}

// sameDir reports whether a and b are the same directory (the same
// device and inode, so that different spellings of a path agree).
func sameDir(a, b string) bool {
	var sa, sb unix.Stat_t
	if unix.Stat(a, &sa) != nil || unix.Stat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
