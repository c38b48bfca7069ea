package lustre

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/striped"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Go transcriptions of the C structs in lustre_user.h (see lov.go), field by
// field, to check the hand-written offsets. The C structs are packed; the
// fields of these happen to be naturally aligned, except the __u64 at byte
// 36 of lov_comp_md_entry_v1, which is transcribed as [8]byte.
type cOstID struct{ OiID, OiSeq uint64 } // struct ost_id (union with struct lu_fid: 16 bytes)

type cLovUserMdV1 struct {
	LmmMagic        uint32
	LmmPattern      uint32
	LmmOI           cOstID
	LmmStripeSize   uint32
	LmmStripeCount  uint16
	LmmStripeOffset uint16
}

type cLovUserMdV3 struct {
	LmmMagic        uint32
	LmmPattern      uint32
	LmmOI           cOstID
	LmmStripeSize   uint32
	LmmStripeCount  uint16
	LmmStripeOffset uint16
	LmmPoolName     [lovMaxPoolName + 1]byte
}

type cLovUserOstDataV1 struct {
	LOstOI  cOstID
	LOstGen uint32
	LOstIdx uint32
}

type cLovCompMdV1 struct {
	LcmMagic       uint32
	LcmSize        uint32
	LcmLayoutGen   uint32
	LcmFlags       uint16
	LcmEntryCount  uint16
	LcmMirrorCount uint16
	LcmEcCount     uint8
	LcmPadding3    [1]uint8
	LcmPadding1    [2]uint16
	LcmPadding2    uint64
}

type cLovCompMdEntryV1 struct {
	LcmeID        uint32
	LcmeFlags     uint32
	LcmeExtent    struct{ EStart, EEnd uint64 }
	LcmeOffset    uint32
	LcmeSize      uint32
	LcmeLayoutGen uint32
	LcmeTimeAndID [8]byte
	LcmeDstripe   uint8
	LcmeCstripe   uint8
	LcmeComprType uint8
	LcmeComprBits uint8
}

func TestStructLayoutsMatchHeader(t *testing.T) {
	var v1 cLovUserMdV1
	assert.EqualValues(t, sizeUserMdV1, unsafe.Sizeof(v1))
	assert.EqualValues(t, offMagic, unsafe.Offsetof(v1.LmmMagic))
	assert.EqualValues(t, offPattern, unsafe.Offsetof(v1.LmmPattern))
	assert.EqualValues(t, offOI, unsafe.Offsetof(v1.LmmOI))
	assert.EqualValues(t, offStripeSize, unsafe.Offsetof(v1.LmmStripeSize))
	assert.EqualValues(t, offStripeCount, unsafe.Offsetof(v1.LmmStripeCount))
	assert.EqualValues(t, offStripeOffset, unsafe.Offsetof(v1.LmmStripeOffset))

	var v3 cLovUserMdV3
	assert.EqualValues(t, sizeUserMdV3, unsafe.Sizeof(v3))
	assert.EqualValues(t, offPoolName, unsafe.Offsetof(v3.LmmPoolName))
	assert.EqualValues(t, sizePoolName, len(v3.LmmPoolName))
	assert.EqualValues(t, offStripeOffset, unsafe.Offsetof(v3.LmmStripeOffset), "v3 shares the v1 header")

	var o cLovUserOstDataV1
	assert.EqualValues(t, sizeOstData, unsafe.Sizeof(o))
	assert.EqualValues(t, offOstOI, unsafe.Offsetof(o.LOstOI))
	assert.EqualValues(t, sizeOstOIRaw, unsafe.Sizeof(o.LOstOI))
	assert.EqualValues(t, offOstGen, unsafe.Offsetof(o.LOstGen))
	assert.EqualValues(t, offOstIdx, unsafe.Offsetof(o.LOstIdx))

	var c cLovCompMdV1
	assert.EqualValues(t, sizeCompMd, unsafe.Sizeof(c))
	assert.EqualValues(t, offCompEntryCount, unsafe.Offsetof(c.LcmEntryCount))

	var e cLovCompMdEntryV1
	assert.EqualValues(t, sizeCompEntry, unsafe.Sizeof(e))
	assert.EqualValues(t, offEntryFlags, unsafe.Offsetof(e.LcmeFlags))
	assert.EqualValues(t, offEntryExtent, unsafe.Offsetof(e.LcmeExtent))
	assert.EqualValues(t, offEntryOffset, unsafe.Offsetof(e.LcmeOffset))
	assert.EqualValues(t, offEntrySize, unsafe.Offsetof(e.LcmeSize))
	assert.EqualValues(t, 36, unsafe.Offsetof(e.LcmeTimeAndID), "the packed __u64")

	// The getstripe buffer holds the largest answer we ask for.
	assert.Equal(t, sizeUserMdV3+2000*24, getstripeBufSize)
}

func TestRequestNumbers(t *testing.T) {
	// Decompose each number into the _IOC fields.
	for _, c := range []struct {
		name string
		req  uint
		nr   uint
	}{{"LL_IOC_LOV_SETSTRIPE", llIocLovSetstripe, 154}, {"LL_IOC_LOV_GETSTRIPE", llIocLovGetstripe, 155}} {
		assert.Equal(t, c.nr, c.req&0xFF, c.name+" nr")
		assert.Equal(t, uint('f'), c.req>>8&0xFF, c.name+" type")
		assert.Equal(t, uint(striped.SizeofLong), c.req>>16&(1<<striped.IOCSizeBits-1), c.name+" size")
		assert.Equal(t, uint(striped.IOCWrite), c.req>>striped.IOCDirShift, c.name+" dir")
	}
	if striped.IOCSizeBits == 14 && striped.SizeofLong == 8 { // x86-64, arm64, riscv64...
		// dir=_IOC_WRITE(1)<<30 | size 8<<16 | 'f'(0x66)<<8 | nr
		assert.Equal(t, uint(0x4008669A), llIocLovSetstripe)
		assert.Equal(t, uint(0x4008669B), llIocLovGetstripe)
	}
}

func TestDelayCreateFlag(t *testing.T) {
	assert.Equal(t, unix.O_NOCTTY|unix.O_ASYNC, oLovDelayCreate)
	if unix.O_NOCTTY == 0o400 { // asm-generic fcntl.h: O_NOCTTY 00000400, FASYNC 00020000
		assert.Equal(t, 0o20400, oLovDelayCreate)
	}
}

func TestMagics(t *testing.T) {
	assert.EqualValues(t, 0x0BD10BD0, lovUserMagicV1)
	assert.EqualValues(t, 0x0BD30BD0, lovUserMagicV3)
	assert.EqualValues(t, 0x0BD60BD0, lovUserMagicCompV1)
	assert.EqualValues(t, 65536, lovMinStripeSize)
	assert.EqualValues(t, 0xFFDF, lovV1InsaneStripeIndex)
}

func littleEndianHost() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

func TestEncodeV1Bytes(t *testing.T) {
	b := setstripe{stripeSize: 1 << 20, stripeCount: 4, stripeOffset: 2}.encode()
	require.Len(t, b, 32)
	if !littleEndianHost() {
		t.Skip("byte literals below are little-endian")
	}
	want := []byte{
		0xD0, 0x0B, 0xD1, 0x0B, // lmm_magic LOV_USER_MAGIC_V1
		0x01, 0, 0, 0, // lmm_pattern RAID0
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // lmm_oi
		0x00, 0x00, 0x10, 0x00, // lmm_stripe_size 1 MiB
		0x04, 0x00, // lmm_stripe_count
		0x02, 0x00, // lmm_stripe_offset
	}
	assert.Equal(t, want, b)

	d := setstripe{stripeOffset: lovOffsetDefault}.encode()
	assert.Equal(t, []byte{0xFF, 0xFF}, d[30:32], "LOV_OFFSET_DEFAULT")
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0}, d[24:30], "default size and count are 0")
}

func TestEncodeV3WithPool(t *testing.T) {
	b := setstripe{stripeSize: 1 << 16, stripeCount: 1, stripeOffset: lovOffsetDefault, pool: "flash"}.encode()
	require.Len(t, b, 48)
	assert.Equal(t, lovUserMagicV3, hostEndian.Uint32(b[0:]))
	assert.Equal(t, lovPatternRAID0, hostEndian.Uint32(b[4:]))
	assert.Equal(t, uint32(1<<16), hostEndian.Uint32(b[24:]))
	assert.Equal(t, uint16(1), hostEndian.Uint16(b[28:]))
	assert.Equal(t, append([]byte("flash"), make([]byte, 11)...), b[32:48], "NUL-padded lmm_pool_name[16]")

	full := setstripe{pool: "fifteen_chars_x"}.encode()
	assert.Equal(t, byte(0), full[47], "a 15-byte name keeps its terminating NUL")
}

func TestGetstripeBuffer(t *testing.T) {
	b := getstripeBuffer()
	require.Len(t, b, getstripeBufSize)
	assert.Equal(t, lovUserMagicV1, hostEndian.Uint32(b[0:]))
	assert.Equal(t, uint16(2000), hostEndian.Uint16(b[28:]), "sizes the kernel's answer")
	assert.Equal(t, byte(0xFF), b[32])
	assert.Equal(t, byte(0xFF), b[len(b)-1])
}

// answer builds a v1 or v3 layout as the kernel returns it.
func answer(magic uint32, size uint32, count uint16, gen uint16, osts ...uint32) []byte {
	hdr := sizeUserMdV1
	if magic == lovUserMagicV3 {
		hdr = sizeUserMdV3
	}
	b := make([]byte, hdr+len(osts)*sizeOstData)
	hostEndian.PutUint32(b[0:], magic)
	hostEndian.PutUint32(b[4:], lovPatternRAID0)
	hostEndian.PutUint64(b[8:], 0x2000013a1) // lmm_oi
	hostEndian.PutUint32(b[24:], size)
	hostEndian.PutUint16(b[28:], count)
	hostEndian.PutUint16(b[30:], gen)
	if magic == lovUserMagicV3 {
		copy(b[32:], "pool1")
	}
	for i, idx := range osts {
		o := b[hdr+i*sizeOstData:]
		hostEndian.PutUint64(o[0:], uint64(0x1000+i)) // object id
		hostEndian.PutUint64(o[8:], 0x100000000)      // object seq
		hostEndian.PutUint32(o[20:], idx)
	}
	return b
}

func TestDecodePlain(t *testing.T) {
	l, err := decodeLayout(answer(lovUserMagicV1, 4<<20, 3, 7, 5, 6, 0))
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 4 << 20, StripeCount: 3, StartTarget: 5}, l,
		"start target is the first object's OST, not lmm_layout_gen")

	l, err = decodeLayout(answer(lovUserMagicV3, 1<<20, 2, 0, 9, 10))
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 2, StartTarget: 9}, l)

	// Header only (objects not returned): start unknown.
	l, err = decodeLayout(answer(lovUserMagicV1, 1<<20, 2, 0))
	require.NoError(t, err)
	assert.Equal(t, -1, l.StartTarget)

	// In the prefilled buffer, objects the kernel did not write stay 0xFF.
	buf := getstripeBuffer()
	copy(buf, answer(lovUserMagicV1, 1<<20, 2, 0))
	l, err = decodeLayout(buf)
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 2, StartTarget: -1}, l)

	// Objects without an OST object id (not instantiated) do not count.
	b := answer(lovUserMagicV1, 1<<20, 1, 0, 3)
	clear(b[32:48])
	l, err = decodeLayout(b)
	require.NoError(t, err)
	assert.Equal(t, -1, l.StartTarget)
}

func TestDecodeComposite(t *testing.T) {
	// Two components: [0, 1 MiB) 1 stripe instantiated, [1 MiB, EOF) 4 stripes
	// instantiated, then [EOF-ish) not instantiated.
	comps := [][]byte{
		answer(lovUserMagicV1, 1<<20, 1, 0, 0),
		answer(lovUserMagicV3, 4<<20, 4, 0, 7, 8, 9, 10),
		answer(lovUserMagicV1, 16<<20, 8, 0),
	}
	flags := []uint32{lcmeFlInit, lcmeFlInit, 0}
	n := len(comps)
	off := sizeCompMd + n*sizeCompEntry
	b := make([]byte, off)
	hostEndian.PutUint32(b[0:], lovUserMagicCompV1)
	hostEndian.PutUint16(b[offCompEntryCount:], uint16(n))
	for i, c := range comps {
		e := b[sizeCompMd+i*sizeCompEntry:]
		hostEndian.PutUint32(e[0:], uint32(i+1))
		hostEndian.PutUint32(e[offEntryFlags:], flags[i])
		hostEndian.PutUint32(e[offEntryOffset:], uint32(len(b)))
		hostEndian.PutUint32(e[offEntrySize:], uint32(len(c)))
		b = append(b, c...)
	}
	hostEndian.PutUint32(b[4:], uint32(len(b)))
	l, err := decodeLayout(b)
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 4 << 20, StripeCount: 4, StartTarget: 7}, l, "last instantiated component")

	// None instantiated: the last component, no start target.
	for i := range n {
		hostEndian.PutUint32(b[sizeCompMd+i*sizeCompEntry+offEntryFlags:], 0)
	}
	l, err = decodeLayout(b)
	require.NoError(t, err)
	assert.Equal(t, driver.Layout{StripeSize: 16 << 20, StripeCount: 8, StartTarget: -1}, l)

	// A component pointing outside the buffer is an error, not a panic.
	hostEndian.PutUint32(b[sizeCompMd+2*sizeCompEntry+offEntryOffset:], uint32(len(b)))
	_, err = decodeLayout(b)
	assert.ErrorContains(t, err, "outside")
}

func TestDecodeErrors(t *testing.T) {
	_, err := decodeLayout(make([]byte, 10))
	assert.ErrorContains(t, err, "shorter")
	foreign := make([]byte, 64)
	hostEndian.PutUint32(foreign, 0x0BD70BD0) // LOV_USER_MAGIC_FOREIGN
	_, err = decodeLayout(foreign)
	assert.ErrorContains(t, err, "unsupported layout magic 0x0bd70bd0")
	comp := make([]byte, sizeCompMd)
	hostEndian.PutUint32(comp, lovUserMagicCompV1)
	hostEndian.PutUint16(comp[offCompEntryCount:], 3)
	_, err = decodeLayout(comp)
	assert.ErrorContains(t, err, "does not fit")
}
