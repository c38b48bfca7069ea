package ufs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Files in memory (tmpfs, ramfs: /dev/shm, node-local scratch, E10 cache
// directories) are read and written with raw system calls, which the Go
// scheduler does not see: a read or write there is a copy that never
// waits for a device, and the scheduler's bookkeeping around a system
// call costs more than the copy's share of the CPU when ranks outnumber
// cores. With Go's usual calls, each 512 KiB pwritev that outlasts a
// scheduler tick hands the processor to another thread and takes it back
// (collperf at 4 ranks on 2 cores: 144-150 ms of CPU per write call and
// 83-90 per read, summed over ranks, against 141-143 and 75-81 with raw
// calls; 1.8% and 2.7% more bandwidth in alternating launches). A raw call holds its
// goroutine's processor, so each moves at most rawChunk bytes (about a
// millisecond) before the scheduler and the garbage collector get it
// back.
const rawChunk = 4 << 20

// Magic numbers of the memory file systems (statfs(2)).
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// inMemory reports whether the descriptor's file lives in a memory file
// system.
func inMemory(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	return memoryFS(uint32(st.Type))
}

// memoryFS reports whether a statfs magic is a memory file system's.
func memoryFS(magic uint32) bool { return magic == tmpfsMagic || magic == ramfsMagic }

// rawIOVs is how many buffers one raw vectored call passes (the caller's
// loop goes on with the rest).
const rawIOVs = 64

// rawVectored returns a preadv/pwritev (by system call number) that moves
// at most rawChunk bytes per call.
func rawVectored(nr uintptr) vectorCall {
	return func(fd int, bufs [][]byte, off int64) (int, error) {
		var iov [rawIOVs]unix.Iovec
		k, total := 0, 0
		for _, b := range bufs {
			if k == rawIOVs || total == rawChunk {
				break
			}
			n := min(len(b), rawChunk-total)
			iov[k].Base = &b[0]
			iov[k].SetLen(n)
			k, total = k+1, total+n
		}
		n, _, e := unix.RawSyscall6(nr, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(k), uintptr(off), 0, 0)
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// positional is a pread or pwrite.
type positional func(fd int, p []byte, off int64) (int, error)

// rawPositional returns a pread/pwrite (by system call number) that moves
// at most rawChunk bytes per call.
func rawPositional(nr uintptr) positional {
	return func(fd int, p []byte, off int64) (int, error) {
		if len(p) == 0 {
			return 0, nil
		}
		p = p[:min(len(p), rawChunk)]
		n, _, e := unix.RawSyscall6(nr, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}
