//go:build !(ppc64 || ppc64le || mips || mipsle || mips64 || mips64le)

package striped

// asm-generic/ioctl.h values (x86, arm, arm64, riscv64, loong64, s390x).
const (
	IOCSizeBits         = 14
	IOCNone     uintptr = 0
	IOCWrite    uintptr = 1
	IOCRead     uintptr = 2
)
