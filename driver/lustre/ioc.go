package lustre

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux ioctl request numbers are built by the _IOC(dir, type, nr, size)
// macro of include/uapi/asm-generic/ioctl.h: nr in bits 0-7, type in bits
// 8-15, the argument size above that and the direction on top. Most
// architectures use 14 size bits and 2 direction bits (write=1, read=2);
// powerpc and mips use 13 and 3 (write=4, read=2) — see ioc_generic.go and
// ioc_other.go. The tests check iocW/iocR against x/sys/unix's
// FS_IOC_SETFLAGS (_IOW('f', 2, long)) and FS_IOC_GETFLAGS (_IOR('f', 1,
// long)), which x/sys generates from the kernel headers of each arch.
const (
	iocNRBits    = 8
	iocTypeBits  = 8
	iocNRShift   = 0
	iocTypeShift = iocNRShift + iocNRBits
	iocSizeShift = iocTypeShift + iocTypeBits
	iocDirShift  = iocSizeShift + iocSizeBits
)

// ioc is the kernel's _IOC macro.
func ioc(dir, typ, nr, size uintptr) uint {
	return uint(dir<<iocDirShift | size<<iocSizeShift | typ<<iocTypeShift | nr<<iocNRShift)
}

// iocW is _IOW(typ, nr, a type of size bytes); iocR is _IOR.
func iocW(typ, nr, size uintptr) uint { return ioc(iocWrite, typ, nr, size) }
func iocR(typ, nr, size uintptr) uint { return ioc(iocRead, typ, nr, size) }

// sizeofLong is sizeof(long) in the Linux C ABI, which equals the pointer
// size on every architecture Go supports.
const sizeofLong = unsafe.Sizeof(uintptr(0))

// ioctlFunc issues ioctl(fd, req, &arg[0]). The kernel may read and write
// arg. The driver holds one so that tests can replace the kernel.
type ioctlFunc func(fd int, req uint, arg []byte) error

// sysIoctl is the real ioctl(2). arg must not be empty.
func sysIoctl(fd int, req uint, arg []byte) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&arg[0])))
		runtime.KeepAlive(arg)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}
