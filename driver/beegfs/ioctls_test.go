package beegfs

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/driver/striped"
	"github.com/stretchr/testify/assert"
)

// Go transcriptions of the C structs in beegfs_client.h (see ioctls.go);
// C and Go lay out these field types the same way.
type cGetStripeInfoArg struct {
	OutPatternType uint32 // unsigned
	OutChunkSize   uint32 // unsigned
	OutNumTargets  uint16 // uint16_t
}

type cMkFileWithStripeHintsArg struct {
	Filename   uintptr // const char*
	Mode       uint32  // unsigned
	Numtargets uint32  // unsigned
	Chunksize  uint32  // unsigned
}

func TestStructLayoutsMatchHeader(t *testing.T) {
	var g cGetStripeInfoArg
	assert.EqualValues(t, sizeStripeInfo, unsafe.Sizeof(g))
	assert.EqualValues(t, offInfoPatternType, unsafe.Offsetof(g.OutPatternType))
	assert.EqualValues(t, offInfoChunkSize, unsafe.Offsetof(g.OutChunkSize))
	assert.EqualValues(t, offInfoNumTargets, unsafe.Offsetof(g.OutNumTargets))

	var m cMkFileWithStripeHintsArg
	assert.EqualValues(t, sizeMkfile, unsafe.Sizeof(m))
	assert.EqualValues(t, offMkFilename, unsafe.Offsetof(m.Filename))
	assert.EqualValues(t, offMkMode, unsafe.Offsetof(m.Mode))
	assert.EqualValues(t, offMkNumTargets, unsafe.Offsetof(m.Numtargets))
	assert.EqualValues(t, offMkChunkSize, unsafe.Offsetof(m.Chunksize))
	if ptrSize == 8 {
		assert.EqualValues(t, 24, sizeMkfile)
	}
}

func TestRequestNumbers(t *testing.T) {
	for _, c := range []struct {
		name     string
		req      uint
		nr, size uint
		dir      uintptr
	}{
		{"BEEGFS_IOC_GET_STRIPEINFO", beegfsIocGetStripeInfo, 25, 12, striped.IOCRead},
		{"BEEGFS_IOC_MKFILE_STRIPEHINTS", beegfsIocMkfileStripeHints, 27, uint(unsafe.Sizeof(cMkFileWithStripeHintsArg{})), striped.IOCWrite},
	} {
		assert.Equal(t, c.nr, c.req&0xFF, c.name+" nr")
		assert.Equal(t, uint('f'), c.req>>8&0xFF, c.name+" type")
		assert.Equal(t, c.size, c.req>>16&(1<<striped.IOCSizeBits-1), c.name+" size")
		assert.Equal(t, uint(c.dir), c.req>>striped.IOCDirShift, c.name+" dir")
	}
	if striped.IOCSizeBits == 14 && ptrSize == 8 { // x86-64, arm64, riscv64...
		// _IOR: 2<<30 | 12<<16 | 'f'<<8 | 25 ; _IOW: 1<<30 | 24<<16 | 'f'<<8 | 27
		assert.Equal(t, uint(0x800C6619), beegfsIocGetStripeInfo)
		assert.Equal(t, uint(0x4018661B), beegfsIocMkfileStripeHints)
	}
}

func littleEndianHost() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

func TestEncodeMkfileBytes(t *testing.T) {
	var ptr uint64 = 0x00007F0011223344 // a variable: does not fit a 32-bit uintptr constant
	b := mkfileHints{mode: 0o644, numTargets: 4, chunkSize: 1 << 20}.encode(uintptr(ptr))
	if !littleEndianHost() || ptrSize != 8 {
		t.Skip("byte literals below are for 64-bit little-endian")
	}
	want := []byte{
		0x44, 0x33, 0x22, 0x11, 0x00, 0x7F, 0, 0, // filename
		0xA4, 0x01, 0, 0, // mode 0644
		0x04, 0, 0, 0, // numtargets
		0, 0, 0x10, 0, // chunksize 1 MiB
		0, 0, 0, 0, // tail padding
	}
	assert.Equal(t, want, b)
}

func TestDecodeStripeInfo(t *testing.T) {
	b := make([]byte, sizeStripeInfo)
	hostEndian.PutUint32(b[0:], patternRAID0)
	hostEndian.PutUint32(b[4:], 512<<10)
	hostEndian.PutUint16(b[8:], 6)
	s, err := decodeStripeInfo(b)
	assert.NoError(t, err)
	assert.Equal(t, stripeInfo{patternType: 1, chunkSize: 512 << 10, numTargets: 6}, s)
	_, err = decodeStripeInfo(b[:sizeStripeInfo-1])
	assert.ErrorContains(t, err, "stripe info of 11 bytes is shorter than BeegfsIoctl_GetStripeInfo_Arg (12)")
	assert.Equal(t, driver.Layout{StripeSize: 512 << 10, StripeCount: 6, StartTarget: -1}, s.layout())

	assert.Equal(t, driver.Layout{StartTarget: -1}, stripeInfo{patternType: patternInvalid, chunkSize: 1 << 20}.layout())
	assert.Equal(t, driver.Layout{StripeSize: 1 << 20, StripeCount: 2, StartTarget: -1},
		stripeInfo{patternType: patternBuddyMirror, chunkSize: 1 << 20, numTargets: 2}.layout())
	assert.EqualValues(t, 2, patternRAID10)
}

func TestChunkSizeFor(t *testing.T) {
	cases := map[int64]int64{
		1: 64 << 10, 64 << 10: 64 << 10, 64<<10 + 1: 128 << 10, 1000000: 1 << 20,
		1 << 20: 1 << 20, 3 << 20: 4 << 20, 1 << 31: 1 << 31, 1 << 40: 1 << 31,
	}
	for in, want := range cases {
		assert.Equal(t, want, chunkSizeFor(in), in)
	}
}
