package striped

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux ioctl request numbers are built by the _IOC(dir, type, nr, size)
// macro of include/uapi/asm-generic/ioctl.h: nr in bits 0-7, type in bits
// 8-15, the argument size above that and the direction on top. Most
// architectures use 14 size bits and 2 direction bits (none=0, write=1,
// read=2); powerpc and mips use 13 and 3 (none=1, write=4, read=2): see
// ioc_generic.go and ioc_other.go. The tests check the encoding against
// request numbers that x/sys/unix generates from each architecture's
// kernel headers.
const (
	iocNRBits    = 8
	iocTypeBits  = 8
	iocNRShift   = 0
	iocTypeShift = iocNRShift + iocNRBits
	iocSizeShift = iocTypeShift + iocTypeBits

	// IOCDirShift is where the direction bits start.
	IOCDirShift = iocSizeShift + IOCSizeBits
)

// IOC is the kernel's _IOC(dir, type, nr, size).
func IOC(dir, typ, nr, size uintptr) uint {
	return uint(dir<<IOCDirShift | size<<iocSizeShift | typ<<iocTypeShift | nr<<iocNRShift)
}

// IO is _IO(typ, nr): a request without an argument struct.
func IO(typ, nr uintptr) uint { return IOC(IOCNone, typ, nr, 0) }

// IOR is _IOR(typ, nr, a type of size bytes): the kernel writes the argument.
func IOR(typ, nr, size uintptr) uint { return IOC(IOCRead, typ, nr, size) }

// IOW is _IOW(typ, nr, a type of size bytes): the kernel reads the argument.
func IOW(typ, nr, size uintptr) uint { return IOC(IOCWrite, typ, nr, size) }

// IOWR is _IOWR(typ, nr, a type of size bytes): both ways.
func IOWR(typ, nr, size uintptr) uint { return IOC(IOCRead|IOCWrite, typ, nr, size) }

// SizeofLong is sizeof(long) (and of a pointer) in the Linux C ABI, which
// equals the pointer size on every architecture Go supports.
const SizeofLong = unsafe.Sizeof(uintptr(0))

// Ioctl issues ioctl(fd, req, &arg[0]); the kernel may read and write arg.
// refs are buffers that pointers inside arg point to: the caller has
// pinned them, the function keeps them alive for the call. A driver holds
// one so that tests can stand in for the kernel.
type Ioctl func(fd int, req uint, arg []byte, refs ...[]byte) error

// SysIoctl is the real ioctl(2), repeated when a signal interrupts it.
// arg must not be empty.
func SysIoctl(fd int, req uint, arg []byte, refs ...[]byte) error {
	return retryEINTR(func() error {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&arg[0])))
		runtime.KeepAlive(arg)
		runtime.KeepAlive(refs)
		if errno != 0 {
			return errno
		}
		return nil
	})
}

// retryEINTR repeats call while a signal interrupts it.
func retryEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}
