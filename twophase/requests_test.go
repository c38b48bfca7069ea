package twophase

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// Request lists survive the compact encoding, out-of-order pieces
// included, and a damaged list is an error.
func TestDecodeRequests(t *testing.T) {
	want := []extent{{0, 8}, {8, 16}, {100, 1}, {40, 4}, {1 << 40, 1 << 33}}
	var b []byte
	var end int64
	for _, x := range want {
		b = binary.AppendVarint(b, x.off-end)
		b = binary.AppendUvarint(b, uint64(x.n))
		end = x.off + x.n
	}
	got, err := decodeRequests(b, len(want), nil)
	require.NoError(t, err)
	require.Equal(t, want, got)

	for _, bad := range []struct {
		b []byte
		n int
	}{
		{b, len(want) + 1},            // too few pieces
		{b, len(want) - 1},            // bytes left over
		{b[:len(b)-1], len(want)},     // truncated
		{[]byte{0x80, 0x80, 0x80}, 1}, // unterminated varint
		{append([]byte{0}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 1}, // length past int64
	} {
		_, err := decodeRequests(bad.b, bad.n, nil)
		require.Error(t, err)
	}
}
