package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// state is the emulated file system's shared state for one file: when
// each target is next free, and which writer holds each stripe lock. It
// lives in a memory-mapped sidecar file so that every process (rank) that
// opens the file sees the same state; one open File maps it once.
//
// Layout, in int64 words (native byte order; the sidecar never leaves the
// machine):
//
//	[0] magic  [1] version  [2] targets  [3] slots  [4] last clock reading
//	[5] lock revocations of all writers (statistics)  [6..7] reserved
//	[8 .. 8+targets)            busy-until time of each target (ns)
//	then slots * 3 words        stripe lock slots: tag, owner, reader
//
// Lock slots form a direct-mapped cache indexed by stripe % slots. The tag
// is stripe+1 (0 = empty). When two stripes share a slot the newer one
// evicts the older one's lock for free, as a lock LRU drops idle locks.
//
// Every update happens inside lock/unlock, which excludes other Files of
// this process (mu) and other processes (an OFD lock on byte 0 of the
// state file; the kernel drops it if a process dies). The words are still
// accessed with sync/atomic so that each access is one untorn 8-byte load
// or store whatever the mapping.
type state struct {
	mu     sync.Mutex
	words  []int64
	fd     int    // state file descriptor, -1 for private in-memory state
	mapped []byte // the mapping, nil for in-memory state
}

const (
	stateMagic   = 0x636f6c6c696f5349 // "collioSI"
	stateVersion = 1

	wMagic, wVersion, wTargets, wSlots, wLastNow = 0, 1, 2, 3, 4
	headerWords                                  = 8
	slotWords                                    = 3
	defaultSlots                                 = 1 << 16
)

func stateWords(targets int, slots int64) int64 {
	return headerWords + int64(targets) + slots*slotWords
}

// newMemState returns private state for one process, used when the
// state file cannot be written (a read-only directory) and by tests.
func newMemState(targets int, slots int64) *state {
	s := &state{words: make([]int64, stateWords(targets, slots)), fd: -1}
	s.init(targets, slots)
	return s
}

func (s *state) init(targets int, slots int64) {
	atomic.StoreInt64(&s.words[wTargets], int64(targets))
	atomic.StoreInt64(&s.words[wSlots], slots)
	atomic.StoreInt64(&s.words[wVersion], stateVersion)
	atomic.StoreInt64(&s.words[wMagic], stateMagic)
}

func (s *state) targets() int { return int(atomic.LoadInt64(&s.words[wTargets])) }
func (s *state) slots() int64 { return atomic.LoadInt64(&s.words[wSlots]) }
func (s *state) load(i int64) int64 {
	return atomic.LoadInt64(&s.words[i])
}
func (s *state) store(i, v int64) { atomic.StoreInt64(&s.words[i], v) }

// busyIndex is the word holding target t's busy-until time.
func (s *state) busyIndex(t int) int64 { return headerWords + int64(t) }

// slotIndex is the first word (the tag) of stripe's lock slot.
func (s *state) slotIndex(stripe int64) int64 {
	return headerWords + int64(s.targets()) + (stripe%s.slots())*slotWords
}

// lock gives the caller exclusive use of the state; false when the state
// was closed.
func (s *state) lock() bool {
	s.mu.Lock()
	if s.words == nil {
		s.mu.Unlock()
		return false
	}
	if s.fd >= 0 {
		// Errors other than EINTR cannot happen on a valid descriptor that
		// we opened read-write; should one occur, in-process exclusion
		// still holds and the model only loses precision.
		s.ofd(unix.F_WRLCK, unix.F_OFD_SETLKW)
	}
	return true
}

func (s *state) unlock() {
	if s.fd >= 0 {
		s.ofd(unix.F_UNLCK, unix.F_OFD_SETLK)
	}
	s.mu.Unlock()
}

func (s *state) ofd(kind int16, cmd int) error {
	for {
		lk := unix.Flock_t{Type: kind, Whence: 0, Start: 0, Len: 1}
		err := unix.FcntlFlock(uintptr(s.fd), cmd, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}

func (s *state) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.words == nil {
		return nil
	}
	s.words = nil
	var err error
	if s.mapped != nil {
		err = unix.Munmap(s.mapped)
		s.mapped = nil
	}
	if s.fd >= 0 {
		if cerr := unix.Close(s.fd); err == nil {
			err = cerr
		}
		s.fd = -1
	}
	return err
}

// openStateFile maps the state sidecar at name for a file with targets
// targets. fresh (the data file was just created) replaces any old state;
// otherwise an existing one is used, or created if missing.
func openStateFile(name string, targets int, fresh bool) (*state, error) {
	if fresh {
		if err := publishState(name, targets, true); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT && !fresh {
		if err := publishState(name, targets, false); err != nil {
			return nil, err
		}
		fd, err = unix.Open(name, unix.O_RDWR|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	s, err := mapState(fd, name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if s.targets() != targets {
		s.close()
		return nil, &os.PathError{Op: "open", Path: name,
			Err: fmt.Errorf("sim state has %d targets but the parameters say %d", s.targets(), targets)}
	}
	return s, nil
}

// mapState maps an initialised state file and checks its header.
func mapState(fd int, name string) (*state, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	corrupt := &os.PathError{Op: "open", Path: name, Err: errors.New("corrupt sim state file")}
	if st.Size < headerWords*8 || st.Size%8 != 0 {
		return nil, corrupt
	}
	b, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: name, Err: err}
	}
	s := &state{words: unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8), fd: fd, mapped: b}
	t, n := s.load(wTargets), s.load(wSlots)
	if s.load(wMagic) != stateMagic || s.load(wVersion) != stateVersion ||
		t < 1 || t > maxTargets || n < 1 || stateWords(int(t), n)*8 != st.Size {
		unix.Munmap(b)
		return nil, corrupt
	}
	return s, nil
}

// publishState writes a fresh state file under a temporary name and moves
// it to name: replacing an existing one, or (replace false) only if there
// is none, so that concurrent openers agree on one file.
func publishState(name string, targets int, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	size := stateWords(targets, defaultSlots) * 8
	if err := tmp.Truncate(size); err != nil {
		return err
	}
	hdr := make([]byte, headerWords*8)
	for i, v := range map[int]int64{wMagic: stateMagic, wVersion: stateVersion, wTargets: int64(targets), wSlots: defaultSlots} {
		binary.NativeEndian.PutUint64(hdr[i*8:], uint64(v))
	}
	if _, err := tmp.WriteAt(hdr, 0); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
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
