package adio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// interleaved gives rank r of n a view of base's data tiled so that the
// ranks' tiles alternate: base's data must lie in [0, base.Extent()).
func interleaved(base *layout.Type, etype *layout.Type, r, n int, disp int64) View {
	ft := must(layout.Resized(base, 0, int64(n)*base.Extent()))
	return View{Disp: disp + int64(r)*base.Extent(), Etype: etype, Filetype: ft}
}

// genBase draws a random noncontiguous type whose data lies inside its
// extent [0, extent), made of int32 elements.
func genBase(t *rapid.T) *layout.Type {
	el := layout.Int32
	var ty *layout.Type
	switch rapid.IntRange(0, 4).Draw(t, "shape") {
	case 0: // vector
		bl := rapid.IntRange(1, 4).Draw(t, "bl")
		ty = must(layout.Vector(rapid.IntRange(1, 6).Draw(t, "count"), bl, bl+rapid.IntRange(0, 3).Draw(t, "gap"), el))
	case 1: // indexed
		n := rapid.IntRange(1, 5).Draw(t, "n")
		bls, dis := make([]int, n), make([]int, n)
		at := 0
		for i := range n {
			at += rapid.IntRange(0, 3).Draw(t, "gap")
			dis[i] = at
			bls[i] = rapid.IntRange(0, 4).Draw(t, "bl")
			at += bls[i]
		}
		ty = must(layout.Indexed(bls, dis, el))
	case 2: // subarray
		sizes := []int{rapid.IntRange(1, 5).Draw(t, "s0"), rapid.IntRange(1, 5).Draw(t, "s1"), rapid.IntRange(1, 5).Draw(t, "s2")}
		sub, start := make([]int, 3), make([]int, 3)
		for d := range 3 {
			sub[d] = rapid.IntRange(1, sizes[d]).Draw(t, "sub")
			start[d] = rapid.IntRange(0, sizes[d]-sub[d]).Draw(t, "start")
		}
		order := layout.Order(rapid.SampledFrom([]layout.Order{layout.OrderC, layout.OrderFortran}).Draw(t, "order"))
		ty = must(layout.Subarray(sizes, sub, start, order, el))
	case 3: // struct of different element sizes
		ty = must(layout.Struct([]int{rapid.IntRange(1, 3).Draw(t, "a"), rapid.IntRange(0, 2).Draw(t, "b")},
			[]int64{0, 16}, []*layout.Type{el, layout.Int64}))
	default: // vector of vectors
		inner := must(layout.Vector(2, 1, 2, el))
		ty = must(layout.HVector(rapid.IntRange(1, 3).Draw(t, "count"), 1, inner.Extent()+int64(4*rapid.IntRange(0, 2).Draw(t, "gap")), inner))
	}
	if ty.Size() == 0 {
		ty = el
	}
	ext := ty.TrueLB() + ty.TrueExtent() + int64(4*rapid.IntRange(0, 2).Draw(t, "pad"))
	return must(layout.Resized(ty, 0, ext))
}

// Every rank writes through an interleaved random view; the file equals
// the one computed block by block, and reading it back gives the data.
func TestRandomViewsWriteRead(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(rt, "ranks")
		base := genBase(rt)
		etype := layout.Int32
		disp := int64(rapid.IntRange(0, 3).Draw(rt, "disp") * 8)
		off := int64(rapid.IntRange(0, 3).Draw(rt, "off"))
		elems := make([]int64, n)
		for r := range elems {
			elems[r] = int64(rapid.IntRange(0, 40).Draw(rt, "elems")) // 0: an empty contribution
		}
		dsWrite := rapid.SampledFrom([]string{"enable", "disable"}).Draw(rt, "ds_write")
		dsRead := rapid.SampledFrom([]string{"enable", "disable"}).Draw(rt, "ds_read")
		buf := fmt.Sprint(rapid.SampledFrom([]int{16, 64, 4096}).Draw(rt, "bufsize"))
		collective := rapid.Bool().Draw(rt, "collective")
		atomic := rapid.Bool().Draw(rt, "atomic")
		cb := rapid.SampledFrom([]string{"automatic", "enable", "disable"}).Draw(rt, "romio_cb")
		cbNodes := fmt.Sprint(rapid.IntRange(1, n).Draw(rt, "cb_nodes"))
		cbBuf := fmt.Sprint(rapid.SampledFrom([]int{8, 100, 1 << 20}).Draw(rt, "cb_buffer_size"))
		noIndep := rapid.SampledFrom([]string{"false", "true"}).Draw(rt, "romio_no_indep_rw")
		strategy := rapid.SampledFrom([]string{"auto", "auto", "twophase", "dynamic", "static", "tam"}).Draw(rt, "collio_strategy")
		nodeSize := fmt.Sprint(rapid.IntRange(0, 3).Draw(rt, "collio_node_size"))
		if !collective {
			noIndep = "false"
		}

		path := tempPath(t, "rand")
		want := []byte{}
		for r := 0; r < n; r++ {
			want = expected(want, interleaved(base, etype, r, n, disp), off, rankData(r, 4*elems[r]))
		}
		err := comm.RunWorld(n, 0, func(c comm.Comm) error {
			h := map[string]string{"romio_ds_write": dsWrite, "romio_ds_read": dsRead, "ind_wr_buffer_size": buf, "ind_rd_buffer_size": buf,
				"romio_cb_write": cb, "romio_cb_read": cb, "cb_config_list": "*:*", "cb_nodes": cbNodes,
				"cb_buffer_size": cbBuf, "romio_no_indep_rw": noIndep, "collio_strategy": strategy, "collio_node_size": nodeSize}
			f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
			if err != nil {
				return err
			}
			defer f.Close()
			if err := f.SetAtomicity(atomic); err != nil {
				return err
			}
			v := interleaved(base, etype, c.Rank(), n, disp)
			if err := f.SetView(v, nil); err != nil {
				return err
			}
			data := rankData(c.Rank(), 4*elems[c.Rank()])
			write, read := f.WriteAt, f.ReadAt
			if collective {
				write, read = f.WriteAtAll, f.ReadAtAll
			}
			if n, err := write(Bytes(data), off); err != nil || n != int64(len(data)) {
				return fmt.Errorf("write: %d, %v", n, err)
			}
			if err := f.Sync(); err != nil {
				return err
			}
			last, _ := f.Stats()
			switch {
			case !collective:
			case strategy != "auto" && last.Strategy != strategy:
				return fmt.Errorf("collio_strategy=%s ran %s", strategy, last.Strategy)
			case strategy == "auto" && cb == "enable" && last.Strategy == "independent":
				return fmt.Errorf("romio_cb_write=enable ran %s", last.Strategy)
			}
			got := make([]byte, len(data))
			if n, err := read(Bytes(got), off); err != nil || n != int64(len(data)) {
				return fmt.Errorf("read: %d, %v", n, err)
			}
			if !bytes.Equal(got, data) {
				return errors.New("read back differs from written data")
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			rt.Fatalf("file differs from expected: got %d bytes, want %d", len(got), len(want))
		}
	})
}

// Noncontiguous memory: a memory vector picks every other int32.
func TestNoncontiguousMemory(t *testing.T) {
	path := tempPath(t, "mem")
	mem := must(layout.Vector(8, 1, 2, layout.Int32))
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		buf := rankData(c.Rank(), mem.Extent())
		if _, err := f.WriteAtAll(Access{Buf: buf, Count: 1, MemType: mem}, int64(c.Rank())*32); err != nil {
			return err
		}
		back := make([]byte, len(buf))
		if _, err := f.ReadAtAll(Access{Buf: back, Count: 1, MemType: mem}, int64(c.Rank())*32); err != nil {
			return err
		}
		for i := 0; i < 8; i++ {
			if !bytes.Equal(back[8*i:8*i+4], buf[8*i:8*i+4]) {
				return fmt.Errorf("element %d differs", i)
			}
		}
		return f.Close()
	})
	got := readFile(t, path)
	require.Len(t, got, 64)
	for r := 0; r < 2; r++ {
		src := rankData(r, mem.Extent())
		for i := 0; i < 8; i++ {
			require.Equal(t, src[8*i:8*i+4], got[32*r+4*i:32*r+4*i+4])
		}
	}
}

// Bad input: each a clear error on every rank, and nothing written.
func TestBadInputWritesNothing(t *testing.T) {
	path := tempPath(t, "bad")
	odd := must(layout.Contiguous(3, layout.Byte))
	overlap := must(layout.HIndexed([]int{4, 4}, []int64{0, 2}, layout.Byte))
	decreasing := must(layout.HIndexed([]int{4, 4}, []int64{8, 0}, layout.Byte))
	cases := []struct {
		name  string
		do    func(f *File) error
		class *ioerr.Class
		words string
	}{
		{"nil buffer", func(f *File) error { _, err := f.WriteAtAll(Access{Count: 4}, 0); return err }, ioerr.ErrArg, "nil"},
		{"short buffer", func(f *File) error { _, err := f.WriteAtAll(Access{Buf: make([]byte, 2), Count: 4}, 0); return err }, ioerr.ErrArg, "shorter"},
		{"short typed buffer", func(f *File) error {
			_, err := f.WriteAtAll(Access{Buf: make([]byte, 10), Count: 2, MemType: layout.Int64}, 0)
			return err
		}, ioerr.ErrArg, "too short"},
		{"negative offset", func(f *File) error { _, err := f.WriteAtAll(Bytes([]byte{1}), -3); return err }, ioerr.ErrArg, "offset -3"},
		{"filetype not multiple of etype", func(f *File) error {
			return f.SetView(View{Etype: layout.Int32, Filetype: odd}, nil)
		}, ioerr.ErrType, "not a multiple"},
		{"overlapping filetype", func(f *File) error { return f.SetView(View{Etype: layout.Byte, Filetype: overlap}, nil) }, ioerr.ErrType, "filetype"},
		{"decreasing filetype", func(f *File) error { return f.SetView(View{Etype: layout.Byte, Filetype: decreasing}, nil) }, ioerr.ErrType, "filetype"},
		{"negative displacement", func(f *File) error { return f.SetView(View{Disp: -1, Etype: layout.Byte, Filetype: layout.Byte}, nil) }, ioerr.ErrArg, "negative"},
		{"not a whole etype", func(f *File) error {
			if err := f.SetView(View{Etype: layout.Int32, Filetype: layout.Int32}, nil); err != nil {
				return err
			}
			_, err := f.WriteAtAll(Bytes(make([]byte, 6)), 0)
			return err
		}, ioerr.ErrArg, "etype"},
		{"only one rank bad", func(f *File) error {
			off := int64(0)
			if f.comm.Rank() == 1 {
				off = -1
			}
			_, err := f.WriteAtAll(Bytes([]byte{1}), off)
			return err
		}, ioerr.ErrArg, "rank 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := sameOnAll(t, 3, func(c comm.Comm) error {
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
				if err != nil {
					return err
				}
				defer f.Close()
				return tc.do(f)
			})
			require.ErrorIs(t, errs[0], tc.class, "got %v", errs[0])
			require.Contains(t, errs[0].Error(), tc.words)
			if tc.name != "only one rank bad" {
				require.Empty(t, readFile(t, path), "nothing written")
			}
		})
	}
}

func TestReadOnlyAndWriteOnly(t *testing.T) {
	path := tempPath(t, "ro")
	require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
	errs := sameOnAll(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeRdOnly, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteAtAll(Bytes([]byte("x")), 0)
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrReadOnly)
	require.Equal(t, "data", string(readFile(t, path)))
	errs = sameOnAll(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeWrOnly, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.ReadAtAll(Bytes(make([]byte, 1)), 0)
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrAccess)
}

// Reads past end of file return what is there; file pointers and seeks
// count etypes of the view.
func TestEOFPointersSeek(t *testing.T) {
	path := tempPath(t, "eof")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	world(t, 1, func(c comm.Comm) error {
		f, err := Open(c, path, ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		// Every other pair of bytes: 01 45 89 ...
		ft := must(layout.Resized(must(layout.Contiguous(2, layout.Byte)), 0, 4))
		if err := f.SetView(View{Disp: 0, Etype: layout.Byte, Filetype: ft}, nil); err != nil {
			return err
		}
		got := make([]byte, 8)
		n, err := f.ReadAt(Bytes(got), 0)
		if err != nil || n != 6 || string(got[:6]) != "014589" {
			return fmt.Errorf("read past EOF: n=%d err=%v got=%q", n, err, got[:n])
		}
		if end, err := f.Seek(0, io.SeekEnd); err != nil || end != 6 {
			return fmt.Errorf("seek end: %d %v", end, err)
		}
		if _, err := f.Seek(-2, io.SeekCurrent); err != nil {
			return err
		}
		if n, err := f.Write(Bytes([]byte("ab"))); err != nil || n != 2 || f.Position() != 6 {
			return fmt.Errorf("write at pointer: %d %v pos %d", n, err, f.Position())
		}
		if b, err := f.ByteOffset(5); err != nil || b != 9 {
			return fmt.Errorf("byte offset: %d %v", b, err)
		}
		if _, err := f.Seek(-1, io.SeekStart); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("negative seek: %v", err)
		}
		if _, err := f.Seek(0, 7); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("bad whence: %v", err)
		}
		return nil
	})
	require.Equal(t, "01234567ab", string(readFile(t, path)))
}

func TestSizeOps(t *testing.T) {
	path := tempPath(t, "size")
	world(t, 3, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Preallocate(1000); err != nil {
			return err
		}
		if s, _ := f.Size(); s != 1000 {
			return fmt.Errorf("size after preallocate %d", s)
		}
		if err := f.SetSize(10); err != nil {
			return err
		}
		if s, _ := f.Size(); s != 10 {
			return fmt.Errorf("size after set_size %d", s)
		}
		err = f.SetSize(int64(c.Rank()))
		if !errors.Is(err, ioerr.ErrNotSame) {
			return fmt.Errorf("differing sizes: %v", err)
		}
		if err := f.SetSize(-1); !errors.Is(err, ioerr.ErrArg) {
			return fmt.Errorf("negative size: %v", err)
		}
		return nil
	})
}

func TestClosedFile(t *testing.T) {
	path := tempPath(t, "closed")
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if _, err := f.WriteAt(Bytes([]byte{1}), 0); !errors.Is(err, ioerr.ErrBadFile) {
			return fmt.Errorf("write after close: %v", err)
		}
		if err := f.Close(); !errors.Is(err, ioerr.ErrBadFile) {
			return fmt.Errorf("double close: %v", err)
		}
		return nil
	})
}

// A filetype whose extent is smaller than its data span (PnetCDF builds one
// for every noncontiguous access: the header bytes plus a subarray) is
// accepted; its first tile is usable, and an access past it is a clear
// error, not wrong data.
func TestViewWithOverlappingTiles(t *testing.T) {
	path := tempPath(t, "pnc")
	ft := must(layout.Resized(must(layout.HIndexed([]int{4, 4}, []int64{0, 12}, layout.Byte)), 0, 8))
	require.True(t, ft.TilesOverlap())
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.SetView(View{Disp: int64(16 * c.Rank()), Etype: layout.Byte, Filetype: ft}, nil); err != nil {
			return err
		}
		if _, err := f.WriteAtAll(Bytes([]byte("abcdefgh")), 0); err != nil {
			return err
		}
		back := make([]byte, 4)
		if n, err := f.ReadAtAll(Bytes(back), 4); err != nil || n != 4 || string(back) != "efgh" {
			return fmt.Errorf("read back %q, %d, %v", back, n, err)
		}
		_, err = f.WriteAtAll(Bytes([]byte("xy")), 7)
		if !errors.Is(err, ioerr.ErrType) || !strings.Contains(err.Error(), "first tile") {
			return fmt.Errorf("write past the first tile: %v", err)
		}
		return nil
	})
	got := readFile(t, path)
	require.Equal(t, "abcd"+strings.Repeat("\x00", 8)+"efgh"+"abcd"+strings.Repeat("\x00", 8)+"efgh", string(got))
}
