package adio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

// Transfers whose byte positions do not fit in int64. The host MPI-IO
// (OMPIO, ROMIO) multiplies the offset by the etype size unchecked and
// writes at the wrapped position; collio fails with ErrArg instead.

// wrapOff is the offset of the report: (2^61+1) etypes of 8 bytes is byte
// 2^64+8, which wraps to byte 8.
const wrapOff = 1<<61 + 1

// lastOff is the last offset in 8-byte etypes whose byte position fits:
// byte 2^63-8.
const lastOff = math.MaxInt64 / 8

// int64View is the view of the report: 8-byte etypes, contiguous.
var int64View = View{Etype: layout.Int64, Filetype: layout.Int64}

// zeroExtent is an int64 of extent 0: count instances of it fill 8 bytes
// of memory and any number of bytes of the file (so a count can be huge).
var zeroExtent = must(layout.Resized(layout.Int64, 0, 0))

// requireOverflow checks that err is ErrArg and mentions each of want.
func requireOverflow(t *testing.T, err error, want ...string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, ioerr.ErrArg), "class of %v, want invalid argument", err)
	for _, w := range want {
		require.Contains(t, err.Error(), w)
	}
}

// requireEmpty checks that nothing was written to path.
func requireEmpty(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Zero(t, st.Size(), "%s: nothing may be written", path)
}

func offStr(off int64) string { return fmt.Sprintf("offset %d", off) }

// Independent transfers, the file pointer, Seek and ByteOffset on one
// rank: every case fails with ErrArg naming the offset, and nothing is
// written.
func TestOverflowIndependent(t *testing.T) {
	strided := View{Etype: layout.Int64, Filetype: must(layout.Resized(layout.Int64, 0, 1<<40))}
	far := View{Disp: 1 << 62, Etype: layout.Byte, Filetype: layout.Byte}
	eight, sixteen := make([]byte, 8), make([]byte, 16)
	cases := []struct {
		name string
		view View
		do   func(f *File) error
		want []string
	}{
		{"write_at of the report", int64View, func(f *File) error { _, err := f.WriteAt(Bytes(eight), wrapOff); return err },
			[]string{"write_at", offStr(wrapOff), "2^63-1"}},
		{"read_at", int64View, func(f *File) error { _, err := f.ReadAt(Bytes(eight), wrapOff); return err },
			[]string{"read_at", offStr(wrapOff)}},
		{"write_at whose end passes 2^63-1", int64View, func(f *File) error { _, err := f.WriteAt(Bytes(sixteen), lastOff); return err },
			[]string{"write_at", offStr(lastOff)}},
		{"write_at past the view's displacement", far, func(f *File) error { _, err := f.WriteAt(Bytes(eight), 1<<62); return err },
			[]string{"write_at", offStr(1 << 62)}},
		{"write_at through a strided view", strided, func(f *File) error { _, err := f.WriteAt(Bytes(eight), 1<<24); return err },
			[]string{"write_at", offStr(1 << 24)}},
		{"write at the file pointer", int64View, func(f *File) error {
			if _, err := f.Seek(lastOff, io.SeekStart); err != nil {
				return fmt.Errorf("seek to the last offset: %w", err)
			}
			_, err := f.Write(Bytes(sixteen))
			if f.Position() != lastOff {
				return fmt.Errorf("the pointer moved to %d", f.Position())
			}
			return err
		}, []string{"write", offStr(lastOff)}},
		{"seek", int64View, func(f *File) error { _, err := f.Seek(wrapOff, io.SeekStart); return err },
			[]string{"seek", offStr(wrapOff)}},
		{"seek from the current position", int64View, func(f *File) error {
			if _, err := f.Seek(5, io.SeekStart); err != nil {
				return err
			}
			_, err := f.Seek(math.MaxInt64, io.SeekCurrent)
			return err
		}, []string{"seek", offStr(math.MaxInt64)}},
		{"seek from the end", int64View, func(f *File) error { _, err := f.Seek(lastOff+1, io.SeekEnd); return err },
			[]string{"seek", offStr(lastOff + 1)}},
		{"get_byte_offset", int64View, func(f *File) error { _, err := f.ByteOffset(wrapOff); return err },
			[]string{"get_byte_offset", offStr(wrapOff)}},
		{"write_at of 2^64 bytes", int64View, func(f *File) error {
			_, err := f.WriteAt(Access{Buf: eight, Count: 1 << 61, MemType: zeroExtent}, 0)
			return err
		}, []string{"write_at", "count 2305843009213693952", "2^63-1"}},
		{"read_at of 2^63 bytes", int64View, func(f *File) error {
			_, err := f.ReadAt(Access{Buf: eight, Count: 1 << 60, MemType: zeroExtent}, 0)
			return err
		}, []string{"read_at", "count 1152921504606846976"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tempPath(t, "f")
			var err error
			world(t, 1, func(c comm.Comm) error {
				f, oerr := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
				if oerr != nil {
					return oerr
				}
				if verr := f.SetView(tc.view, nil); verr != nil {
					return verr
				}
				err = tc.do(f)
				return f.Close()
			})
			requireOverflow(t, err, tc.want...)
			requireEmpty(t, path)
		})
	}
	// The last byte position that fits still works (ByteOffset only: the
	// file system would refuse the write).
	world(t, 1, func(c comm.Comm) error {
		f, err := Open(c, tempPath(t, "g"), ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		if err := f.SetView(int64View, nil); err != nil {
			return err
		}
		if b, err := f.ByteOffset(lastOff); err != nil || b != lastOff*8 {
			return fmt.Errorf("ByteOffset(%d) = %d, %v; want %d", int64(lastOff), b, err, int64(lastOff*8))
		}
		if pos, err := f.Seek(lastOff, io.SeekStart); err != nil || pos != lastOff {
			return fmt.Errorf("Seek(%d) = %d, %v", int64(lastOff), pos, err)
		}
		return f.Close()
	})
}

// Collective transfers (blocking and nonblocking, explicit offsets and the
// file pointer) where one rank's byte range does not fit: every rank
// returns that rank's error, nobody hangs, and nothing is written.
func TestOverflowCollective(t *testing.T) {
	const n, bad = 4, 2
	eight := func() []byte { return make([]byte, 8) }
	cases := []struct {
		name string
		do   func(f *File, r int) error
		want []string
	}{
		{"write_at_all", func(f *File, r int) error {
			off := int64(r)
			if r == bad {
				off = wrapOff
			}
			_, err := f.WriteAtAll(Bytes(eight()), off)
			return err
		}, []string{"write_at_all", "(rank 2)", offStr(wrapOff)}},
		{"read_at_all", func(f *File, r int) error {
			off := int64(r)
			if r == bad {
				off = wrapOff
			}
			_, err := f.ReadAtAll(Bytes(eight()), off)
			return err
		}, []string{"read_at_all", "(rank 2)", offStr(wrapOff)}},
		{"write_at_all on every rank", func(f *File, r int) error {
			_, err := f.WriteAtAll(Bytes(eight()), wrapOff+int64(r))
			return err
		}, []string{"write_at_all", "(rank 0)", offStr(wrapOff)}},
		{"write_at_all of 2^64 bytes", func(f *File, r int) error {
			a := Bytes(eight())
			if r == bad {
				a = Access{Buf: eight(), Count: 1 << 61, MemType: zeroExtent}
			}
			_, err := f.WriteAtAll(a, int64(r))
			return err
		}, []string{"write_at_all", "(rank 2)", "count 2305843009213693952"}},
		{"write_all at the file pointer", func(f *File, r int) error {
			if r == bad {
				if _, err := f.Seek(lastOff, io.SeekStart); err != nil {
					return err
				}
			}
			_, err := f.WriteAll(Bytes(make([]byte, 16)))
			return err
		}, []string{"write_all", "(rank 2)", offStr(lastOff)}},
		{"iwrite_at_all", func(f *File, r int) error {
			off := int64(r)
			if r == bad {
				off = wrapOff
			}
			req, err := f.IWriteAtAll(Bytes(eight()), off)
			if err != nil {
				return err
			}
			_, err = req.Wait()
			return err
		}, []string{"write_at_all", "(rank 2)", offStr(wrapOff)}},
		{"iread_at_all", func(f *File, r int) error {
			off := int64(r)
			if r == bad {
				off = wrapOff
			}
			req, err := f.IReadAtAll(Bytes(eight()), off)
			if err != nil {
				return err
			}
			_, err = req.Wait()
			return err
		}, []string{"read_at_all", "(rank 2)", offStr(wrapOff)}},
		{"iwrite_all at the file pointer", func(f *File, r int) error {
			if r == bad {
				if _, err := f.Seek(lastOff, io.SeekStart); err != nil {
					return err
				}
			}
			req, err := f.IWriteAll(Bytes(make([]byte, 16)))
			if err != nil {
				return err
			}
			if p := f.Position(); p < 0 {
				return fmt.Errorf("the file pointer wrapped to %d", p)
			}
			_, err = req.Wait()
			return err
		}, []string{"write_all", "(rank 2)", offStr(lastOff)}},
	}
	for _, tc := range cases {
		for _, strategy := range []string{"auto", "twophase"} {
			t.Run(tc.name+"/"+strategy, func(t *testing.T) {
				path := tempPath(t, "f")
				errs := sameOnAll(t, n, func(c comm.Comm) error {
					f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"collio_strategy": strategy}})
					if err != nil {
						return err
					}
					if err := f.SetView(int64View, nil); err != nil {
						return err
					}
					err = tc.do(f, c.Rank())
					// The file still works: a later collective call
					// succeeds on every rank.
					if _, werr := f.WriteAtAll(Bytes(nil), 0); werr != nil {
						return fmt.Errorf("after %v: the next collective call failed: %w", err, werr)
					}
					if cerr := f.Close(); cerr != nil {
						return fmt.Errorf("after %v: close: %w", err, cerr)
					}
					return err
				})
				requireOverflow(t, errs[0], tc.want...)
				requireEmpty(t, path)
			})
		}
	}
}

// Shared and ordered transfers near the end of the representable range,
// and SeekShared past it.
func TestOverflowShared(t *testing.T) {
	const n = 3
	cases := []struct {
		name string
		do   func(f *File, r int) error
		same bool // a collective failure: the same error on every rank
		want []string
	}{
		{"seek_shared", func(f *File, r int) error { _, err := f.SeekShared(wrapOff, io.SeekStart); return err },
			true, []string{"seek_shared", offStr(wrapOff)}},
		{"seek_shared from the current position", func(f *File, r int) error {
			if _, err := f.SeekShared(5, io.SeekStart); err != nil {
				return err
			}
			_, err := f.SeekShared(math.MaxInt64, io.SeekCurrent)
			return err
		}, true, []string{"seek_shared", offStr(math.MaxInt64)}},
		{"write_shared", func(f *File, r int) error {
			if _, err := f.SeekShared(lastOff, io.SeekStart); err != nil {
				return err
			}
			_, _, err := f.WriteShared(Bytes(make([]byte, 16)))
			return err
		}, false, []string{"write_shared", "offset "}},
		{"read_shared", func(f *File, r int) error {
			if _, err := f.SeekShared(lastOff, io.SeekStart); err != nil {
				return err
			}
			_, _, err := f.ReadShared(Bytes(make([]byte, 16)))
			return err
		}, false, []string{"read_shared", "offset "}},
		{"write_ordered", func(f *File, r int) error {
			// Rank 0's data ends at 2^63-8, rank 1's at 2^63, rank 2's
			// starts at 2^63.
			if _, err := f.SeekShared(lastOff-1, io.SeekStart); err != nil {
				return err
			}
			_, _, err := f.WriteOrdered(Bytes(make([]byte, 8)))
			return err
		}, true, []string{"write_ordered", "(rank 1)", offStr(lastOff)}},
		{"read_ordered", func(f *File, r int) error {
			if _, err := f.SeekShared(lastOff-1, io.SeekStart); err != nil {
				return err
			}
			_, _, err := f.ReadOrdered(Bytes(make([]byte, 8)))
			return err
		}, true, []string{"read_ordered", "(rank 1)", offStr(lastOff)}},
		{"write_ordered of 2^64 bytes on one rank", func(f *File, r int) error {
			a := Bytes(make([]byte, 8))
			if r == 1 {
				a = Access{Buf: make([]byte, 8), Count: 1 << 61, MemType: zeroExtent}
			}
			_, _, err := f.WriteOrdered(a)
			return err
		}, true, []string{"write_ordered", "(rank 1)", "count 2305843009213693952"}},
		{"write_ordered of 3*2^62 etypes", func(f *File, r int) error {
			if err := f.SetView(View{Etype: layout.Byte, Filetype: layout.Byte}, nil); err != nil {
				return err
			}
			// Each rank's 2^62 bytes fit; the pointer cannot move past
			// all of them.
			_, _, err := f.WriteOrdered(Access{Buf: make([]byte, 1), Count: 1 << 62, MemType: must(layout.Resized(layout.Byte, 0, 0))})
			return err
		}, true, []string{"write_ordered", "total more than 2^63-1 etypes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tempPath(t, "f")
			errs := make([]error, n)
			world(t, n, func(c comm.Comm) error {
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
				if err != nil {
					return err
				}
				if err := f.SetView(int64View, nil); err != nil {
					return err
				}
				errs[c.Rank()] = tc.do(f, c.Rank())
				return f.Close()
			})
			for r, err := range errs {
				requireOverflow(t, err, tc.want...)
				if tc.same {
					require.Equal(t, errs[0].Error(), err.Error(), "rank %d", r)
				}
			}
			requireEmpty(t, path)
		})
	}
}

// The checked arithmetic itself.
func TestCheckedArithmetic(t *testing.T) {
	for _, tc := range []struct {
		a, b    int64
		mul     int64
		mulOK   bool
		sum     int64
		sumOK   bool
		comment string
	}{
		{0, math.MaxInt64, 0, true, math.MaxInt64, true, "zero"},
		{wrapOff, 8, 0, false, wrapOff + 8, true, "the report"},
		{lastOff, 8, lastOff * 8, true, lastOff + 8, true, "the last etype that fits"},
		{1 << 62, 2, 0, false, 1<<62 + 2, true, "2^63"},
		{math.MaxInt64, 1, math.MaxInt64, true, 0, false, "max+1"},
		{math.MaxInt64, -1, -math.MaxInt64, true, math.MaxInt64 - 1, true, "max-1"},
		{math.MinInt64, -1, 0, false, 0, false, "min-1"},
	} {
		m, ok := mul64(tc.a, tc.b)
		require.Equal(t, tc.mulOK, ok, "%s: mul ok", tc.comment)
		if ok {
			require.Equal(t, tc.mul, m, tc.comment)
		}
		s, ok := add64(tc.a, tc.b)
		require.Equal(t, tc.sumOK, ok, "%s: add ok", tc.comment)
		if ok {
			require.Equal(t, tc.sum, s, tc.comment)
		}
	}
}

// With collective buffering disabled (no communication in the call), the
// rank with the bad offset fails at once and every rank at close; the
// other ranks' data is written, and nothing lands at the wrapped position.
func TestOverflowCollectiveNoCommunication(t *testing.T) {
	const n, bad = 4, 2
	path := tempPath(t, "f")
	now := make([]error, n)
	closed := sameOnAll(t, n, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"romio_cb_write": "disable"}})
		if err != nil {
			return err
		}
		if err := f.SetView(int64View, nil); err != nil {
			return err
		}
		off := int64(10 + c.Rank())
		if c.Rank() == bad {
			off = wrapOff
		}
		_, now[c.Rank()] = f.WriteAtAll(Bytes(rankData(c.Rank(), 8)), off)
		return f.Close()
	})
	for r, err := range now {
		if r == bad {
			requireOverflow(t, err, "write_at_all", "(rank 2)", offStr(wrapOff))
		} else {
			require.NoError(t, err, "rank %d", r)
		}
	}
	requireOverflow(t, closed[0], "close", "write_at_all", offStr(wrapOff))
	got := readFile(t, path)
	require.Len(t, got, 8*(10+n-1)+8)
	require.Equal(t, make([]byte, 80), got[:80], "bytes before offset 10 (etypes)")
	require.Equal(t, make([]byte, 8), got[8*(10+bad):8*(10+bad)+8], "rank %d's place", bad)
}
