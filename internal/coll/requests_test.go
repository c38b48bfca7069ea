package coll

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// Request lists survive the compact encoding, out-of-order pieces
// included, and a damaged list is an error.
func TestDecodeRequests(t *testing.T) {
	want := []Extent{{0, 8}, {8, 16}, {100, 1}, {40, 4}, {1 << 40, 1 << 33}}
	var b []byte
	var end int64
	for _, x := range want {
		b = binary.AppendVarint(b, x.Off-end)
		b = binary.AppendUvarint(b, uint64(x.N))
		end = x.Off + x.N
	}
	require.Equal(t, b, AppendRequests(nil, want))
	got, err := DecodeRequests(b, len(want), nil)
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
		_, err := DecodeRequests(bad.b, bad.n, nil)
		require.Error(t, err)
	}
}
