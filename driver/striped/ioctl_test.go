package striped

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestIOCEncodingMatchesKernelHeaders checks _IO, _IOR, _IOW and _IOWR
// against request numbers that x/sys/unix takes from the kernel headers of
// this architecture.
func TestIOCEncodingMatchesKernelHeaders(t *testing.T) {
	assert.Equal(t, uint(unix.FS_IOC_SETFLAGS), IOW('f', 2, SizeofLong), "_IOW('f', 2, long)")
	assert.Equal(t, uint(unix.FS_IOC_GETFLAGS), IOR('f', 1, SizeofLong), "_IOR('f', 1, long)")
	assert.Equal(t, uint(unix.BLKGETSIZE64), IOR(0x12, 114, SizeofLong), "_IOR(0x12, 114, size_t)")
	assert.Equal(t, uint(unix.FS_IOC_GET_ENCRYPTION_POLICY_EX), IOWR('f', 22, 9), "_IOWR('f', 22, __u8[9])")
	assert.Equal(t, uint(unix.FS_IOC_ADD_ENCRYPTION_KEY), IOWR('f', 23, 80), "_IOWR('f', 23, struct fscrypt_add_key_arg)")
	assert.Equal(t, uint(unix.BLKFLSBUF), IO(0x12, 97), "_IO(0x12, 97)")
	assert.Equal(t, uint(unix.BLKRRPART), IO(0x12, 95), "_IO(0x12, 95)")
	assert.EqualValues(t, unsafe.Sizeof(int(0)), SizeofLong, "long is pointer-sized on Linux")

	if IOCSizeBits == 14 && SizeofLong == 8 { // x86-64, arm64, riscv64: the numbers as the headers print them
		assert.Equal(t, uint(0x40086602), IOW('f', 2, SizeofLong))
		assert.Equal(t, uint(0x80086601), IOR('f', 1, SizeofLong))
		assert.Equal(t, uint(0xC0096616), IOWR('f', 22, 9))
		assert.Equal(t, uint(0x1261), IO(0x12, 97))
	}
}

func TestIOCFieldsDoNotOverlap(t *testing.T) {
	maxSize := uintptr(1)<<IOCSizeBits - 1
	req := IOWR(0xFF, 0xFF, maxSize)
	assert.Equal(t, uint(0xFF), req&0xFF, "nr")
	assert.Equal(t, uint(0xFF), req>>8&0xFF, "type")
	assert.Equal(t, uint(maxSize), req>>16&uint(maxSize), "size")
	assert.Equal(t, uint(IOCRead|IOCWrite), req>>IOCDirShift, "dir")
}

func TestRetryEINTRRepeatsOnlyInterruptedCalls(t *testing.T) {
	calls := 0
	err := retryEINTR(func() error {
		calls++
		if calls < 3 {
			return unix.EINTR
		}
		return nil
	})
	assert.NoError(t, err)
	assert.Equal(t, 3, calls)

	calls = 0
	err = retryEINTR(func() error { calls++; return unix.EAGAIN })
	assert.ErrorIs(t, err, unix.EAGAIN)
	assert.Equal(t, 1, calls, "other errors are returned at once")
}

// TestSysIoctlReachesTheKernel issues FIONREAD, which Linux answers for
// every regular file (the bytes from the offset to the end), and an
// ioctl no file system here knows.
func TestSysIoctlReachesTheKernel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)

	arg := make([]byte, 4)                              // int
	require.NoError(t, SysIoctl(fd, unix.TIOCINQ, arg)) // TIOCINQ is FIONREAD
	assert.EqualValues(t, 10, *(*int32)(unsafe.Pointer(&arg[0])))

	err = SysIoctl(fd, IOW('f', 154, SizeofLong), make([]byte, 64)) // LL_IOC_LOV_SETSTRIPE off Lustre
	assert.ErrorIs(t, err, unix.ENOTTY)
}
