package adio

import (
	"testing"

	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// An access goes out as one run when its bytes are one range of the file:
// through a contiguous view, or inside one block of a view with holes.
func TestOneRun(t *testing.T) {
	holes, err := layout.Resized(layout.Bytes(16), 0, 32) // 16 bytes of every 32
	require.NoError(t, err)
	v := View{Disp: 100, Etype: layout.Byte, Filetype: holes}
	for _, tc := range []struct {
		name     string
		v        View
		a        Access
		off      int64
		want     int64
		wantMany bool
	}{
		{"contiguous view", View{Disp: 7, Etype: layout.Bytes(4), Filetype: layout.Bytes(4)}, Bytes(make([]byte, 64)), 3, 7 + 12, false},
		{"one whole block", v, Bytes(make([]byte, 16)), 0, 100, false},
		{"inside a block", v, Bytes(make([]byte, 8)), 4, 104, false},
		{"a later tile's block", v, Bytes(make([]byte, 16)), 16, 132, false},
		{"across a hole", v, Bytes(make([]byte, 16)), 8, 0, true},
		{"noncontiguous memory", v, Access{Buf: make([]byte, 32), Count: 1, MemType: holes}, 0, 0, true},
	} {
		got, ok := oneRun(tc.v, tc.a, tc.off)
		require.Equal(t, !tc.wantMany, ok, tc.name)
		if ok {
			require.Equal(t, tc.want, got, tc.name)
		}
	}
}
