//go:build !(ppc64 || ppc64le || mips || mipsle || mips64 || mips64le)

package beegfs

// asm-generic/ioctl.h values (x86, arm, arm64, riscv64, loong64, s390x).
const (
	iocSizeBits         = 14
	iocWrite    uintptr = 1
	iocRead     uintptr = 2
)
