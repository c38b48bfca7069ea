package ufs

import (
	"golang.org/x/sys/unix"
)

// Lock takes an open-file-description lock on [off, off+length), waiting
// for conflicting holders. OFD locks belong to this open file, not to the
// process, so two opens in one process conflict as two processes would;
// classic POSIX locks would not, and ranks run as goroutines in tests.
// length 0 locks to end of file (and beyond).
func (f *file) Lock(off, length int64, exclusive bool) error {
	kind := int16(unix.F_RDLCK)
	if exclusive {
		kind = unix.F_WRLCK
	}
	return f.fcntlLock("lock", unix.F_OFD_SETLKW, kind, off, length)
}

// Unlock releases [off, off+length) (length 0: to end of file).
func (f *file) Unlock(off, length int64) error {
	return f.fcntlLock("unlock", unix.F_OFD_SETLK, unix.F_UNLCK, off, length)
}

func (f *file) fcntlLock(op string, cmd int, kind int16, off, length int64) error {
	if off < 0 || length < 0 {
		return f.pathErr(op, unix.EINVAL)
	}
	return f.withFD(op, func(fd int) error {
		err := retryEINTR(func() error {
			// Pid must be 0 for OFD locks; rebuild the struct on each try
			// because the kernel may write into it.
			lk := unix.Flock_t{Type: kind, Whence: 0, Start: off, Len: length, Pid: 0}
			return unix.FcntlFlock(uintptr(fd), cmd, &lk)
		})
		return f.pathErr(op, err)
	})
}
