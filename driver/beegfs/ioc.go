package beegfs

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux ioctl request numbers are built by the _IOC(dir, type, nr, size)
// macro of include/uapi/asm-generic/ioctl.h: nr in bits 0-7, type in bits
// 8-15, the argument size above that and the direction on top (14 size
// bits, write=1, read=2 on most architectures; 13 bits, write=4 on powerpc
// and mips: ioc_generic.go, ioc_other.go). The tests check the encoding
// against x/sys/unix's FS_IOC_SETFLAGS/FS_IOC_GETFLAGS.
const (
	iocNRBits    = 8
	iocTypeBits  = 8
	iocNRShift   = 0
	iocTypeShift = iocNRShift + iocNRBits
	iocSizeShift = iocTypeShift + iocTypeBits
	iocDirShift  = iocSizeShift + iocSizeBits
)

func ioc(dir, typ, nr, size uintptr) uint {
	return uint(dir<<iocDirShift | size<<iocSizeShift | typ<<iocTypeShift | nr<<iocNRShift)
}

func iocW(typ, nr, size uintptr) uint { return ioc(iocWrite, typ, nr, size) }
func iocR(typ, nr, size uintptr) uint { return ioc(iocRead, typ, nr, size) }

// ptrSize is the size of a C pointer (and long) in the Linux ABI.
const ptrSize = unsafe.Sizeof(uintptr(0))

// ioctlFunc issues ioctl(fd, req, &arg[0]). refs are the buffers that
// pointers inside arg point to; the caller has pinned them, the function
// keeps them alive for the call. The driver holds one so that tests can
// replace the kernel.
type ioctlFunc func(fd int, req uint, arg []byte, refs ...[]byte) error

func sysIoctl(fd int, req uint, arg []byte, refs ...[]byte) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&arg[0])))
		runtime.KeepAlive(arg)
		runtime.KeepAlive(refs)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}
