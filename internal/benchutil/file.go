//go:build cgo

package benchutil

import (
	"fmt"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
)

// Type is a datatype built for one implementation: a collio layout, or a
// host MPI datatype (the other one is unset).
type Type struct {
	C *collio.Type
	M mpi.Datatype
}

// Types builds datatypes for collio (Host false) or for the host MPI-IO
// (Host true) with the same calls, so a benchmark describes its views and
// buffers once. Free releases the MPI datatypes it made.
type Types struct {
	Host bool
	made []mpi.Datatype
}

func (b *Types) keep(m mpi.Datatype, err error) (Type, error) {
	if err != nil {
		return Type{}, err
	}
	b.made = append(b.made, m)
	return Type{M: m}, nil
}

// Float64 is an 8-byte floating-point element.
func (b *Types) Float64() Type {
	if b.Host {
		return Type{M: mpi.TypeDouble()}
	}
	return Type{C: collio.Float64}
}

// Byte is one byte.
func (b *Types) Byte() Type {
	if b.Host {
		return Type{M: mpi.Byte()}
	}
	return Type{C: collio.Byte}
}

// Contiguous is count copies of old.
func (b *Types) Contiguous(count int, old Type) (Type, error) {
	if b.Host {
		return b.keep(mpi.TypeContiguous(count, old.M))
	}
	t, err := collio.Contiguous(count, old.C)
	return Type{C: t}, err
}

// Subarray is MPI_Type_create_subarray (fortran selects column-major order).
func (b *Types) Subarray(sizes, subsizes, starts []int, fortran bool, old Type) (Type, error) {
	if b.Host {
		order := mpi.OrderC
		if fortran {
			order = mpi.OrderFortran
		}
		return b.keep(mpi.TypeSubarray(sizes, subsizes, starts, order, old.M))
	}
	order := collio.OrderC
	if fortran {
		order = collio.OrderFortran
	}
	t, err := collio.Subarray(sizes, subsizes, starts, order, old.C)
	return Type{C: t}, err
}

// Struct is MPI_Type_create_struct.
func (b *Types) Struct(blocklens []int, displs []int64, types []Type) (Type, error) {
	if b.Host {
		ms := make([]mpi.Datatype, len(types))
		for i, t := range types {
			ms[i] = t.M
		}
		return b.keep(mpi.TypeStruct(blocklens, displs, ms))
	}
	cs := make([]*collio.Type, len(types))
	for i, t := range types {
		cs[i] = t.C
	}
	t, err := collio.Struct(blocklens, displs, cs)
	return Type{C: t}, err
}

// HIndexed is MPI_Type_create_hindexed (displacements in bytes).
func (b *Types) HIndexed(blocklens []int, displs []int64, old Type) (Type, error) {
	if b.Host {
		return b.keep(mpi.TypeHindexed(blocklens, displs, old.M))
	}
	t, err := collio.HIndexed(blocklens, displs, old.C)
	return Type{C: t}, err
}

// HVector is MPI_Type_create_hvector (stride in bytes).
func (b *Types) HVector(count, blocklen int, stride int64, old Type) (Type, error) {
	if b.Host {
		return b.keep(mpi.TypeHvector(count, blocklen, stride, old.M))
	}
	t, err := collio.HVector(count, blocklen, stride, old.C)
	return Type{C: t}, err
}

// Resized is MPI_Type_create_resized.
func (b *Types) Resized(old Type, lb, extent int64) (Type, error) {
	if b.Host {
		return b.keep(mpi.TypeResized(old.M, lb, extent))
	}
	t, err := collio.Resized(old.C, lb, extent)
	return Type{C: t}, err
}

// Free releases the host datatypes made so far.
func (b *Types) Free() {
	for _, m := range b.made {
		if !m.IsNull() {
			m.Free()
		}
	}
	b.made = nil
}

// File is a file opened through collio or through the host MPI-IO, with
// the calls the benchmarks make.
type File struct {
	c *collio.File
	h *mpi.HostFile
}

// OpenFile opens path collectively over c with impl "collio" or "mpiio"
// (for the host MPI-IO, c must be a communicator of the host MPI), for
// writing (created) or reading.
func OpenFile(impl string, c comm.Comm, path string, write bool, hints collio.Hints) (*File, error) {
	switch impl {
	case "collio":
		mode := collio.ModeRdOnly
		if write {
			mode = collio.ModeCreate | collio.ModeWrOnly
		}
		f, err := collio.Open(c, path, mode, hints)
		if err != nil {
			return nil, err
		}
		return &File{c: f}, nil
	case "mpiio":
		mc, ok := c.(mpi.Comm)
		if !ok {
			return nil, fmt.Errorf("the host MPI-IO needs an MPI communicator, not %T", c)
		}
		mode := mpi.ModeRdOnly
		if write {
			mode = mpi.ModeCreate | mpi.ModeWrOnly
		}
		f, err := mpi.HostOpen(mc, path, mode, hints)
		if err != nil {
			return nil, err
		}
		return &File{h: f}, nil
	}
	return nil, fmt.Errorf("unknown implementation %q", impl)
}

// SetView sets the view (collective).
func (f *File) SetView(disp int64, etype, filetype Type) error {
	if f.h != nil {
		return f.h.SetView(disp, etype.M, filetype.M, "native", nil)
	}
	return f.c.SetView(disp, etype.C, filetype.C, nil)
}

// Access is the buffer of one transfer call: Count instances of *Mem in
// Buf, or Buf as contiguous bytes when Mem is nil.
type Access struct {
	Buf   []byte
	Mem   *Type
	Count int
	Size  int64 // data bytes the call moves
}

// Bytes is a contiguous access of all of buf.
func Bytes(buf []byte) Access { return Access{Buf: buf, Size: int64(len(buf))} }

func (a Access) contiguous() bool { return a.Mem == nil }

// Write writes a at offset off (etypes of the view), collectively when
// coll is set.
func (f *File) Write(a Access, off int64, coll bool) error {
	var n int64
	var err error
	switch {
	case f.h != nil:
		buf, count, dt := f.hostArgs(a)
		var m int
		if coll {
			m, err = f.h.WriteAtAll(off, buf, count, dt)
		} else {
			m, err = f.h.WriteAt(off, buf, count, dt)
		}
		n = int64(m)
	case a.contiguous():
		var m int
		if coll {
			m, err = f.c.WriteAtAll(a.Buf, off)
		} else {
			m, err = f.c.WriteAt(a.Buf, off)
		}
		n = int64(m)
	default:
		b := collio.Typed(a.Buf, a.Count, a.Mem.C)
		if coll {
			n, err = f.c.WriteAtAllBuffer(b, off)
		} else {
			n, err = f.c.WriteAtBuffer(b, off)
		}
	}
	if err == nil && n != a.Size {
		err = fmt.Errorf("wrote %d bytes of %d", n, a.Size)
	}
	return err
}

// Read reads into a from offset off, collectively when coll is set; a
// short read is an error.
func (f *File) Read(a Access, off int64, coll bool) error {
	var n int64
	var err error
	switch {
	case f.h != nil:
		buf, count, dt := f.hostArgs(a)
		var m int
		if coll {
			m, err = f.h.ReadAtAll(off, buf, count, dt)
		} else {
			m, err = f.h.ReadAt(off, buf, count, dt)
		}
		n = int64(m)
	case a.contiguous():
		var m int
		if coll {
			m, err = f.c.ReadAtAll(a.Buf, off)
		} else {
			m, err = f.c.ReadAt(a.Buf, off)
		}
		n = int64(m)
	default:
		b := collio.Typed(a.Buf, a.Count, a.Mem.C)
		if coll {
			n, err = f.c.ReadAtAllBuffer(b, off)
		} else {
			n, err = f.c.ReadAtBuffer(b, off)
		}
	}
	if err == nil && n != a.Size {
		err = fmt.Errorf("read %d bytes of %d", n, a.Size)
	}
	return err
}

func (f *File) hostArgs(a Access) ([]byte, int, mpi.Datatype) {
	if a.contiguous() {
		return a.Buf, len(a.Buf), mpi.Byte()
	}
	return a.Buf, a.Count, a.Mem.M
}

// Sync flushes the file (collective).
func (f *File) Sync() error {
	if f.h != nil {
		return f.h.Sync()
	}
	return f.c.Sync()
}

// Close closes the file (collective).
func (f *File) Close() error {
	if f.h != nil {
		return f.h.Close()
	}
	return f.c.Close()
}

// Info returns the effective hints.
func (f *File) Info() map[string]string {
	if f.h != nil {
		m, err := f.h.Info()
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		return m
	}
	return f.c.Info()
}

// Collect copies collio's metrics of the calls since open and the
// aggregators into s (nothing for the host MPI-IO).
func (f *File) Collect(s *Sample) {
	if f.c != nil {
		s.CollectCollio(f.c)
	}
}
