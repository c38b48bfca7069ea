//go:build ppc64 || ppc64le || mips || mipsle || mips64 || mips64le

package lustre

// arch/{powerpc,mips}/include/uapi/asm/ioctl.h values.
const (
	iocSizeBits         = 13
	iocWrite    uintptr = 4
	iocRead     uintptr = 2
)
