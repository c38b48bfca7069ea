package beegfs

import (
	"encoding/binary"
	"fmt"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/striped"
)

// Facts from the BeeGFS client API, ThinkParQ/beegfs (read at commit
// 87d28c1ae1bc): client_module/include/uapi/beegfs_client.h, which
// client_devel/include/beegfs/beegfs_ioctl.h includes:
//
//	#define BEEGFS_IOCTYPE_ID                 'f'
//	#define BEEGFS_IOCNUM_GET_STRIPEINFO      25
//	#define BEEGFS_IOCNUM_MKFILE_STRIPEHINTS  27
//	#define BEEGFS_IOC_GET_STRIPEINFO     _IOR(BEEGFS_IOCTYPE_ID, BEEGFS_IOCNUM_GET_STRIPEINFO,
//	                                           struct BeegfsIoctl_GetStripeInfo_Arg)
//	#define BEEGFS_IOC_MKFILE_STRIPEHINTS _IOW(BEEGFS_IOCTYPE_ID, BEEGFS_IOCNUM_MKFILE_STRIPEHINTS,
//	                                           struct BeegfsIoctl_MkFileWithStripeHints_Arg)
//	#define BEEGFS_STRIPEPATTERN_INVALID 0, _RAID0 1, _RAID10 2, _BUDDYMIRROR 3
//	#define BEEGFS_IOCTL_FILENAME_MAXLEN 256  (including the terminating NUL)
//
//	struct BeegfsIoctl_GetStripeInfo_Arg {   offset
//	    unsigned outPatternType;                0
//	    unsigned outChunkSize;                  4
//	    uint16_t outNumTargets;                 8
//	};                                          size 12 (padded to 4)
//	struct BeegfsIoctl_MkFileWithStripeHints_Arg {
//	    const char* filename;   // a name in the directory the ioctl is issued on      0
//	    unsigned mode;          // permission bits                                     P
//	    unsigned numtargets;    // 0 for directory default                             P+4
//	    unsigned chunksize;     // bytes, must be 2^n >= 64Ki, 0 for directory default P+8
//	};                          size P+12 rounded up to P (24 on 64-bit, 16 on 32-bit); P = pointer size
//
// The client checks (client_module/source/filesystem/FhgfsOpsIoctl.c):
// MKFILE_STRIPEHINTS needs a directory descriptor (else ENOTDIR) and a
// chunk size that is 0 or a power of two >= STRIPEPATTERN_MIN_CHUNKSIZE
// (64 KiB, common/storage/striping/StripePattern.h) (else EINVAL);
// GET_STRIPEINFO answers EISDIR for directories and EINVAL for a handle
// without a pattern.
const (
	iocType        = 'f'
	iocNumGetInfo  = 25
	iocNumMkfile   = 27
	filenameMaxLen = 256
	minChunkSize   = 64 << 10
	maxChunkSize   = 1 << 31 // largest power of two in an unsigned
	maxNumTargets  = 0xFFFF  // outNumTargets is a uint16_t

	patternInvalid     = 0
	patternRAID0       = 1
	patternRAID10      = 2
	patternBuddyMirror = 3
)

// ptrSize is the size of a C pointer in the Linux ABI (that of long).
const ptrSize = striped.SizeofLong

const (
	offInfoPatternType = 0
	offInfoChunkSize   = 4
	offInfoNumTargets  = 8
	sizeStripeInfo     = 12

	offMkFilename   = 0
	offMkMode       = ptrSize
	offMkNumTargets = ptrSize + 4
	offMkChunkSize  = ptrSize + 8
	sizeMkfile      = (ptrSize + 12 + ptrSize - 1) / ptrSize * ptrSize
)

var (
	beegfsIocGetStripeInfo     = striped.IOR(iocType, iocNumGetInfo, sizeStripeInfo)
	beegfsIocMkfileStripeHints = striped.IOW(iocType, iocNumMkfile, sizeMkfile)
)

// hostEndian: the arguments are plain host-order C structs (little-endian
// on x86-64, arm64, riscv64).
var hostEndian = binary.NativeEndian

// stripeInfo is the answer of BEEGFS_IOC_GET_STRIPEINFO.
type stripeInfo struct {
	patternType uint32
	chunkSize   uint32
	numTargets  uint16
}

// decodeStripeInfo reads the answer of BEEGFS_IOC_GET_STRIPEINFO; a
// buffer shorter than the struct is an error, not a panic.
func decodeStripeInfo(b []byte) (stripeInfo, error) {
	if len(b) < sizeStripeInfo {
		return stripeInfo{}, fmt.Errorf("stripe info of %d bytes is shorter than BeegfsIoctl_GetStripeInfo_Arg (%d)", len(b), sizeStripeInfo)
	}
	return stripeInfo{
		patternType: hostEndian.Uint32(b[offInfoPatternType:]),
		chunkSize:   hostEndian.Uint32(b[offInfoChunkSize:]),
		numTargets:  hostEndian.Uint16(b[offInfoNumTargets:]),
	}, nil
}

// layout is the driver.Layout of the info: the chunk size is the stripe
// size and the number of targets the stripe count (for mirrored patterns,
// the number of data targets, which is what file domains should follow).
// BeeGFS does not report a start target by index.
func (s stripeInfo) layout() driver.Layout {
	if s.patternType == patternInvalid || s.chunkSize == 0 {
		return driver.Layout{StartTarget: -1}
	}
	return driver.Layout{StripeSize: int64(s.chunkSize), StripeCount: int(s.numTargets), StartTarget: -1}
}

// mkfileHints is the argument of BEEGFS_IOC_MKFILE_STRIPEHINTS, except
// the name, whose address encode is given.
type mkfileHints struct {
	mode       uint32
	numTargets uint32 // 0 = directory default
	chunkSize  uint32 // 0 = directory default
}

// encode lays out the struct with filename = namePtr, the address of a
// NUL-terminated name that the caller keeps pinned during the ioctl.
func (m mkfileHints) encode(namePtr uintptr) []byte {
	b := make([]byte, sizeMkfile)
	if ptrSize == 8 {
		hostEndian.PutUint64(b[offMkFilename:], uint64(namePtr))
	} else {
		hostEndian.PutUint32(b[offMkFilename:], uint32(namePtr))
	}
	hostEndian.PutUint32(b[offMkMode:], m.mode)
	hostEndian.PutUint32(b[offMkNumTargets:], m.numTargets)
	hostEndian.PutUint32(b[offMkChunkSize:], m.chunkSize)
	return b
}
