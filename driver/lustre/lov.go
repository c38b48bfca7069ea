package lustre

import (
	"encoding/binary"
	"fmt"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/striped"
	"golang.org/x/sys/unix"
)

// Facts from the Lustre user API header, lustre/lustre-release,
// include/uapi/linux/lustre/lustre_user.h (read at commit c881f8ebcbd1;
// older trees keep it at lustre/include/uapi/linux/lustre/lustre_user.h):
//
//	#define LL_IOC_LOV_SETSTRIPE  _IOW('f', 154, long)
//	#define LL_IOC_LOV_GETSTRIPE  _IOW('f', 155, long)
//	#define O_LOV_DELAY_CREATE    (O_NOCTTY | FASYNC)
//	#define LOV_USER_MAGIC_V1     0x0BD10BD0
//	#define LOV_USER_MAGIC_V3     0x0BD30BD0
//	#define LOV_USER_MAGIC_COMP_V1 0x0BD60BD0
//	LOV_PATTERN_RAID0 = 0x001
//	#define LOV_OFFSET_DEFAULT    ((__u16)-1)
//	#define LOV_MAXPOOLNAME       15
//	#define LOV_MIN_STRIPE_SIZE   (1 << 16)
//	#define LOV_MAX_STRIPE_COUNT  2000
//	#define LOV_V1_INSANE_STRIPE_INDEX (0xffe0 - 1)
//	LCME_FL_INIT = 0x00000010
//
// The request numbers say "long" although the argument is a pointer to a
// struct lov_user_md: only the number matters, the kernel takes the
// pointer from the argument.
var (
	llIocLovSetstripe = striped.IOW('f', 154, striped.SizeofLong)
	llIocLovGetstripe = striped.IOW('f', 155, striped.SizeofLong)
)

// oLovDelayCreate makes open(O_CREAT) create the file without allocating
// OST objects, so that LL_IOC_LOV_SETSTRIPE can still choose its layout.
// FASYNC is the kernel's name for O_ASYNC.
const oLovDelayCreate = unix.O_NOCTTY | unix.O_ASYNC

const (
	lovUserMagicV1     uint32 = 0x0BD10BD0
	lovUserMagicV3     uint32 = 0x0BD30BD0
	lovUserMagicCompV1 uint32 = 0x0BD60BD0

	lovPatternRAID0 uint32 = 0x001

	lovOffsetDefault       uint16 = 0xFFFF
	lovMaxPoolName                = 15
	lovMinStripeSize              = 1 << 16
	lovMaxStripeCount             = 2000
	lovV1InsaneStripeIndex        = 0xFFE0 - 1

	lcmeFlInit uint32 = 0x10
)

// Byte layout of the packed, host-endian structs (same header):
//
//	struct lov_user_md_v1 {            offset size
//	    __u32 lmm_magic;                   0    4
//	    __u32 lmm_pattern;                 4    4
//	    struct ost_id lmm_oi;              8   16  (two __u64)
//	    __u32 lmm_stripe_size;            24    4
//	    __u16 lmm_stripe_count;           28    2
//	    __u16 lmm_stripe_offset;          30    2  (union lmm_layout_gen on read)
//	    struct lov_user_ost_data_v1 lmm_objects[];  32
//	};
//	struct lov_user_md_v3 { ...v1 header...; char lmm_pool_name[16] at 32; lmm_objects[] at 48 };
//	struct lov_user_ost_data_v1 { struct ost_id l_ost_oi (0,16); __u32 l_ost_gen (16); __u32 l_ost_idx (20) };  24 bytes
//	struct lov_comp_md_v1 { __u32 lcm_magic (0); __u32 lcm_size (4); __u32 lcm_layout_gen (8);
//	    __u16 lcm_flags (12); __u16 lcm_entry_count (14); ...padding...; lcm_entries[] at 32 };
//	struct lov_comp_md_entry_v1 { __u32 lcme_id (0); __u32 lcme_flags (4); struct lu_extent (8,16);
//	    __u32 lcme_offset (24); __u32 lcme_size (28); ... }                 48 bytes
//
// lcme_offset counts from the start of the lov_comp_md_v1.
const (
	offMagic        = 0
	offPattern      = 4
	offOI           = 8
	offStripeSize   = 24
	offStripeCount  = 28
	offStripeOffset = 30
	offPoolName     = 32
	sizeUserMdV1    = 32
	sizeUserMdV3    = 48
	sizePoolName    = lovMaxPoolName + 1

	offOstOI     = 0
	offOstGen    = 16
	offOstIdx    = 20
	sizeOstData  = 24
	sizeOstOIRaw = 16

	offCompEntryCount = 14
	sizeCompMd        = 32
	offEntryFlags     = 4
	offEntryExtent    = 8
	offEntryOffset    = 24
	offEntrySize      = 28
	sizeCompEntry     = 48
)

// hostEndian is the order of the struct fields: Lustre's user structs are
// host-endian (the kernel swabs them), which is little-endian on x86-64,
// arm64 and riscv64.
var hostEndian = binary.NativeEndian

// setstripe is a layout to set at create; zero fields ask for the
// file-system default.
type setstripe struct {
	stripeSize   uint32 // bytes, a multiple of 64 KiB; 0 = default
	stripeCount  uint16 // 0 = default
	stripeOffset uint16 // first OST index; lovOffsetDefault = default
	pool         string // OST pool; "" = none (then v1 is used)
}

// encode returns the lov_user_md_v1 (or v3 with a pool) for
// LL_IOC_LOV_SETSTRIPE. The kernel overwrites the buffer with the
// resulting layout header on success.
func (s setstripe) encode() []byte {
	magic, size := lovUserMagicV1, sizeUserMdV1
	if s.pool != "" {
		magic, size = lovUserMagicV3, sizeUserMdV3
	}
	b := make([]byte, size)
	hostEndian.PutUint32(b[offMagic:], magic)
	hostEndian.PutUint32(b[offPattern:], lovPatternRAID0)
	// lmm_oi stays zero: the MDS assigns it.
	hostEndian.PutUint32(b[offStripeSize:], s.stripeSize)
	hostEndian.PutUint16(b[offStripeCount:], s.stripeCount)
	hostEndian.PutUint16(b[offStripeOffset:], s.stripeOffset)
	if s.pool != "" {
		copy(b[offPoolName:offPoolName+lovMaxPoolName], s.pool) // NUL-padded
	}
	return b
}

// getstripeBufSize fits a v3 header and LOV_MAX_STRIPE_COUNT objects.
const getstripeBufSize = sizeUserMdV3 + lovMaxStripeCount*sizeOstData

// getstripeBuffer returns the argument for LL_IOC_LOV_GETSTRIPE. The
// kernel sizes its answer from the magic and stripe count it finds in the
// buffer (lov_getstripe in lustre/lov/lov_pack.c), and with a v1/v3 magic
// it answers a composite (PFL) file with its last instantiated component
// as a plain v1/v3 layout. The object area is filled with 0xFF so that
// objects the kernel did not write are recognisable (l_ost_idx 0xFFFFFFFF).
func getstripeBuffer() []byte {
	b := make([]byte, getstripeBufSize)
	for i := sizeUserMdV1; i < len(b); i++ {
		b[i] = 0xFF
	}
	hostEndian.PutUint32(b[offMagic:], lovUserMagicV1)
	hostEndian.PutUint16(b[offStripeCount:], lovMaxStripeCount)
	return b
}

// decodeLayout reads the answer of LL_IOC_LOV_GETSTRIPE: a v1 or v3
// layout, or (from clients that do not convert) a composite one, of which
// the last instantiated component is used, as the kernel itself does.
// StartTarget is the OST index of the first object, -1 when the file has
// no objects yet.
func decodeLayout(b []byte) (driver.Layout, error) {
	if len(b) < sizeUserMdV1 {
		return driver.Layout{}, fmt.Errorf("layout of %d bytes is shorter than lov_user_md_v1", len(b))
	}
	switch magic := hostEndian.Uint32(b[offMagic:]); magic {
	case lovUserMagicV1:
		return decodePlain(b, sizeUserMdV1), nil
	case lovUserMagicV3:
		if len(b) < sizeUserMdV3 {
			return driver.Layout{}, fmt.Errorf("v3 layout of %d bytes is shorter than lov_user_md_v3", len(b))
		}
		return decodePlain(b, sizeUserMdV3), nil
	case lovUserMagicCompV1:
		return decodeComposite(b)
	default:
		return driver.Layout{}, fmt.Errorf("unsupported layout magic %#08x", magic)
	}
}

// decodePlain decodes a v1/v3 layout whose objects start at objOff.
func decodePlain(b []byte, objOff int) driver.Layout {
	l := driver.Layout{
		StripeSize:  int64(hostEndian.Uint32(b[offStripeSize:])),
		StripeCount: int(hostEndian.Uint16(b[offStripeCount:])),
		StartTarget: -1,
	}
	if l.StripeCount > lovV1InsaneStripeIndex { // LOV_ALL_STRIPES & co.: directory templates only
		l.StripeCount = 0
	}
	if l.StripeCount > 0 && len(b) >= objOff+sizeOstData {
		obj := b[objOff : objOff+sizeOstData]
		idx := hostEndian.Uint32(obj[offOstIdx:])
		if idx != 0xFFFFFFFF && !allZero(obj[offOstOI:offOstOI+sizeOstOIRaw]) {
			l.StartTarget = int(idx)
		}
	}
	return l
}

func decodeComposite(b []byte) (driver.Layout, error) {
	if len(b) < sizeCompMd {
		return driver.Layout{}, fmt.Errorf("composite layout of %d bytes is shorter than lov_comp_md_v1", len(b))
	}
	n := int(hostEndian.Uint16(b[offCompEntryCount:]))
	if n == 0 || len(b) < sizeCompMd+n*sizeCompEntry {
		return driver.Layout{}, fmt.Errorf("composite layout with %d components does not fit in %d bytes", n, len(b))
	}
	pick := n - 1 // no component instantiated yet: the last one
	for i := n - 1; i >= 0; i-- {
		e := b[sizeCompMd+i*sizeCompEntry:]
		if hostEndian.Uint32(e[offEntryFlags:])&lcmeFlInit != 0 {
			pick = i
			break
		}
	}
	e := b[sizeCompMd+pick*sizeCompEntry:]
	off, size := int(hostEndian.Uint32(e[offEntryOffset:])), int(hostEndian.Uint32(e[offEntrySize:]))
	if off < 0 || size < sizeUserMdV1 || off > len(b) || size > len(b)-off {
		return driver.Layout{}, fmt.Errorf("component %d at [%d, +%d) lies outside the %d-byte layout", pick, off, size, len(b))
	}
	comp := b[off : off+size]
	switch hostEndian.Uint32(comp[offMagic:]) {
	case lovUserMagicV1, lovUserMagicV3:
		return decodeLayout(comp)
	}
	return driver.Layout{}, fmt.Errorf("component %d has unsupported magic %#08x", pick, hostEndian.Uint32(comp[offMagic:]))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
