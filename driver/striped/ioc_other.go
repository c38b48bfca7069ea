//go:build ppc64 || ppc64le || mips || mipsle || mips64 || mips64le

package striped

// arch/{powerpc,mips}/include/uapi/asm/ioctl.h values.
const (
	IOCSizeBits         = 13
	IOCNone     uintptr = 1
	IOCWrite    uintptr = 4
	IOCRead     uintptr = 2
)
