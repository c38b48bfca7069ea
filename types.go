package collio

import "github.com/collio/collio/layout"

// Type is a data layout like an MPI derived datatype: an ordered list of
// byte blocks with a lower bound and an extent. It describes file views
// (etype, filetype) and noncontiguous memory buffers. Types are immutable
// and compact: a 3-D subarray costs a few records, not one per element.
type Type = layout.Type

// Order is the array storage order of Subarray and Darray.
type Order = layout.Order

// Distrib is a Darray distribution.
type Distrib = layout.Distrib

const (
	OrderC       = layout.OrderC       // row-major (C)
	OrderFortran = layout.OrderFortran // column-major (Fortran)

	DistribBlock  = layout.DistribBlock
	DistribCyclic = layout.DistribCyclic
	DistribNone   = layout.DistribNone
	DargDefault   = layout.DargDefault
)

// Basic types.
var (
	Byte    = layout.Byte
	Int16   = layout.Int16
	Int32   = layout.Int32
	Int64   = layout.Int64
	Float32 = layout.Float32
	Float64 = layout.Float64
)

// Bytes is a basic type of n contiguous bytes.
func Bytes(n int64) *Type { return layout.Bytes(n) }

// Contiguous is count copies of t, one after another (MPI_Type_contiguous).
func Contiguous(count int, t *Type) (*Type, error) { return layout.Contiguous(count, t) }

// Vector is count blocks of blocklen copies of t, block starts stride
// extents of t apart (MPI_Type_vector).
func Vector(count, blocklen, stride int, t *Type) (*Type, error) {
	return layout.Vector(count, blocklen, stride, t)
}

// HVector is Vector with the stride in bytes (MPI_Type_create_hvector).
func HVector(count, blocklen int, stride int64, t *Type) (*Type, error) {
	return layout.HVector(count, blocklen, stride, t)
}

// Indexed is blocks of blocklens[i] copies of t at displs[i] extents of t
// (MPI_Type_indexed).
func Indexed(blocklens, displs []int, t *Type) (*Type, error) {
	return layout.Indexed(blocklens, displs, t)
}

// HIndexed is Indexed with displacements in bytes (MPI_Type_create_hindexed).
func HIndexed(blocklens []int, displs []int64, t *Type) (*Type, error) {
	return layout.HIndexed(blocklens, displs, t)
}

// IndexedBlock is Indexed with one block length (MPI_Type_create_indexed_block).
func IndexedBlock(blocklen int, displs []int, t *Type) (*Type, error) {
	return layout.IndexedBlock(blocklen, displs, t)
}

// Struct is blocks of blocklens[i] copies of types[i] at byte displacement
// displs[i] (MPI_Type_create_struct). No alignment padding is added.
func Struct(blocklens []int, displs []int64, types []*Type) (*Type, error) {
	return layout.Struct(blocklens, displs, types)
}

// Subarray is the subsizes block at starts of an array of sizes elements of
// t (MPI_Type_create_subarray). Its extent is the whole array.
func Subarray(sizes, subsizes, starts []int, order Order, t *Type) (*Type, error) {
	return layout.Subarray(sizes, subsizes, starts, order, t)
}

// Darray is the part of a distributed array that process rank of size owns
// (MPI_Type_create_darray).
func Darray(size, rank int, gsizes []int, distribs []Distrib, dargs, psizes []int, order Order, t *Type) (*Type, error) {
	return layout.Darray(size, rank, gsizes, distribs, dargs, psizes, order, t)
}

// Resized gives t a new lower bound and extent (MPI_Type_create_resized).
func Resized(t *Type, lb, extent int64) (*Type, error) { return layout.Resized(t, lb, extent) }
