package adio

import (
	"io"

	"github.com/collio/collio/internal/ioerr"
)

// Write writes a at the individual file pointer and advances it.
func (f *File) Write(a Access) (int64, error) {
	if err := f.usable("write"); err != nil {
		return 0, err
	}
	return f.atPointer(a, func(off int64) (int64, error) { return f.writeAt("write", f.View(), a, off, false) })
}

// Read reads into a from the individual file pointer and advances it by
// the data actually read.
func (f *File) Read(a Access) (int64, error) {
	if err := f.usable("read"); err != nil {
		return 0, err
	}
	return f.atPointer(a, func(off int64) (int64, error) { return f.readAt("read", f.View(), a, off) })
}

// atPointer runs a transfer at the individual file pointer and advances
// the pointer by the whole etypes moved.
func (f *File) atPointer(a Access, do func(off int64) (int64, error)) (int64, error) {
	f.mu.Lock()
	off := f.fp
	f.mu.Unlock()
	n, err := do(off)
	f.mu.Lock()
	f.fp = off + n/f.etypeSize()
	f.mu.Unlock()
	return n, err
}

// Seek moves the individual file pointer, in etypes of the view, relative
// to the start (io.SeekStart), the current position (io.SeekCurrent) or
// the end of file as seen through the view (io.SeekEnd). It returns the new
// position.
func (f *File) Seek(off int64, whence int) (int64, error) {
	if err := f.usable("seek"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.fp
	case io.SeekEnd:
		end, err := f.endPosition()
		if err != nil {
			return 0, f.wrap(err, "seek")
		}
		base = end
	default:
		return 0, f.errf(ioerr.ErrArg, "seek", "whence %d is not io.SeekStart, io.SeekCurrent or io.SeekEnd", whence)
	}
	pos, err := f.seekTo("seek", f.view, base, off)
	if err != nil {
		return 0, err
	}
	f.fp = pos
	return f.fp, nil
}

// seekTo is a seek's new position, off etypes from base through view v,
// with the error of one that is negative or that no transfer could use:
// its byte position would not fit in an int64.
func (f *File) seekTo(op string, v View, base, off int64) (int64, error) {
	pos, ok := add64(base, off)
	if !ok {
		return 0, f.errf(ioerr.ErrArg, op, "offset %d from position %d is past the largest position, 2^63-1", off, base)
	}
	if pos < 0 {
		return 0, f.errf(ioerr.ErrArg, op, "resulting offset %d is negative", pos)
	}
	if _, ok := dataPos(v, pos, 0); !ok {
		if base == 0 {
			return 0, f.rangeErr(op, v, pos, 0)
		}
		return 0, f.errf(ioerr.ErrArg, op, "offset %d from position %d is out of range: the byte offset of position %d (etypes of %d bytes, view displacement %d) would be past the largest file offset, 2^63-1",
			off, base, pos, v.Etype.Size(), v.Disp)
	}
	return pos, nil
}

// Position returns the individual file pointer, in etypes.
func (f *File) Position() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fp
}

// ByteOffset converts an offset in etypes of the view into an absolute
// byte offset in the file (MPI_File_get_byte_offset).
func (f *File) ByteOffset(off int64) (int64, error) {
	if err := f.usable("get_byte_offset"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.errf(ioerr.ErrArg, "get_byte_offset", "offset %d is negative", off)
	}
	v := f.View()
	pos, ok := dataPos(v, off, 0)
	if !ok {
		return 0, f.rangeErr("get_byte_offset", v, off, 0)
	}
	if v.Filetype.Size() == 0 {
		return v.Disp, nil
	}
	if v.Filetype.IsContiguous() {
		return v.Disp + v.Filetype.LB() + pos, nil
	}
	s := v.stream()
	if err := s.SeekData(pos); err != nil {
		return 0, f.wrap(err, "get_byte_offset")
	}
	b, _, _ := s.Next(1)
	return b, nil
}

// EndPosition returns the position of end of file in etypes of the view:
// where io.SeekEnd points (for shared file pointers, say).
func (f *File) EndPosition() (int64, error) {
	if err := f.usable("get_position"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	end, err := f.endPosition()
	return end, f.wrap(err, "get_position")
}

// endPosition is EndPosition with f.mu held.
func (f *File) endPosition() (int64, error) {
	size, err := f.sizeShared()
	if err != nil {
		return 0, err
	}
	before, err := f.view.stream().DataBefore(size)
	if err != nil {
		return 0, err
	}
	return before / f.view.Etype.Size(), nil
}
