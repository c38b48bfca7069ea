package coll

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/require"
)

// oldFile is a driver.File of fixed contents that counts the bytes read.
type oldFile struct {
	driver.File
	b       []byte
	read    int64
	sizeErr error
}

func (f *oldFile) Size() (int64, error) { return int64(len(f.b)), f.sizeErr }

func (f *oldFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	f.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// A window is read only up to where the file ended; the rest is zeros,
// whatever the buffer held before.
func TestOldEndRead(t *testing.T) {
	old := bytes.Repeat([]byte{7}, 100)
	for _, tc := range []struct {
		name      string
		off, n    int64
		sizeErr   error
		wantBytes int64 // read from the file
	}{
		{"inside", 10, 20, nil, 20},
		{"across the end", 90, 30, nil, 10},
		{"past the end", 120, 30, nil, 0},
		{"size unknown", 90, 30, errors.New("no size"), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &oldFile{b: old, sizeErr: tc.sizeErr}
			end := FileEnd(f)
			f.b = append(f.b, 9, 9, 9) // written later in the call, elsewhere: never seen
			if tc.sizeErr != nil {
				f.b = old
			}
			win := bytes.Repeat([]byte{0xff}, int(tc.n))
			require.NoError(t, end.Read(f, win, tc.off))
			for i, c := range win {
				want := byte(0)
				if tc.off+int64(i) < 100 {
					want = 7
				}
				require.Equal(t, want, c, "byte %d of the window", i)
			}
			require.Equal(t, tc.wantBytes, f.read)
		})
	}
}

// A read error other than end of file is the caller's.
func TestOldEndReadError(t *testing.T) {
	f := &failingReads{}
	err := OldEnd{}.Read(f, make([]byte, 8), 0)
	require.ErrorIs(t, err, errBroken)
}

var errBroken = errors.New("broken")

type failingReads struct{ driver.File }

func (failingReads) ReadAt(p []byte, off int64) (int, error) { return 0, errBroken }
