// Package cdatatypes builds MPI datatypes in C, as an application would,
// and packs them with MPI_Pack, so that package mpi's tests can check
// Layout against MPI's own view of them. It is test support in a package
// of its own because cgo is not allowed in _test.go files. Nothing in
// collio proper imports it, so the library does not carry it.
package cdatatypes

// #cgo pkg-config: ompi-c
// #include <mpi.h>
// #define CT_TRY(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) return rc_; } while (0)
// enum {
//   ct_named, ct_contiguous, ct_vector, ct_hvector_of_vector, ct_indexed, ct_indexed_block_short,
//   ct_hindexed_double, ct_hindexed_block_negative, ct_struct_mixed, ct_resized_interleave,
//   ct_subarray_c, ct_subarray_fortran, ct_darray_block_cyclic2_none, ct_darray_cyclic2_block_cyclic,
//   ct_subarray_of_resized_struct, ct_short_int, ct_dup_contig_dup
// };
// // collio_ct_darray builds the darrays of the verification list for one rank.
// static int collio_ct_darray(int id, int rank, MPI_Datatype *out) {
//   if (id == ct_darray_block_cyclic2_none) {
//     int g[3] = {5, 9, 4}, d[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE};
//     int a[3] = {MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_DISTRIBUTE_DFLT_DARG}, p[3] = {2, 3, 1};
//     return MPI_Type_create_darray(6, rank, 3, g, d, a, p, MPI_ORDER_C, MPI_INT, out);
//   }
//   int g[3] = {7, 5, 3}, d[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
//   int a[3] = {2, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[3] = {2, 2, 2};
//   return MPI_Type_create_darray(8, rank, 3, g, d, a, p, MPI_ORDER_FORTRAN, MPI_DOUBLE, out);
// }
// // collio_ct_derived builds one derived test type; intermediate types are freed.
// static int collio_ct_derived(int id, MPI_Datatype *out) {
//   MPI_Datatype a, b;
//   switch (id) {
//   case ct_contiguous:
//     return MPI_Type_contiguous(5, MPI_INT, out);
//   case ct_vector:
//     return MPI_Type_vector(3, 2, 4, MPI_INT, out);
//   case ct_hvector_of_vector:
//     CT_TRY(MPI_Type_vector(2, 1, 3, MPI_SHORT, &a));
//     CT_TRY(MPI_Type_create_hvector(3, 2, 40, a, out));
//     return MPI_Type_free(&a);
//   case ct_indexed: {
//     int bl[4] = {2, 0, 3, 1}, d[4] = {5, 1, 10, 0};
//     return MPI_Type_indexed(4, bl, d, MPI_INT, out);
//   }
//   case ct_indexed_block_short: {
//     int d[3] = {4, 0, 9};
//     return MPI_Type_create_indexed_block(3, 2, d, MPI_SHORT, out);
//   }
//   case ct_hindexed_double: {
//     int bl[3] = {1, 2, 1};
//     MPI_Aint d[3] = {24, 0, 64};
//     return MPI_Type_create_hindexed(3, bl, d, MPI_DOUBLE, out);
//   }
//   case ct_hindexed_block_negative: {
//     MPI_Aint d[3] = {-16, 8, 40};
//     return MPI_Type_create_hindexed_block(3, 2, d, MPI_INT, out);
//   }
//   case ct_struct_mixed: {
//     int bl[4] = {1, 1, 3, 1};
//     MPI_Aint d[4] = {0, 8, 16, -40};
//     MPI_Datatype t[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_DATATYPE_NULL};
//     CT_TRY(MPI_Type_vector(2, 1, 2, MPI_FLOAT, &t[3]));
//     CT_TRY(MPI_Type_create_struct(4, bl, d, t, out));
//     return MPI_Type_free(&t[3]);
//   }
//   case ct_resized_interleave:
//     // ints at 0 and 12, squeezed to a 4-byte extent: instances interleave.
//     CT_TRY(MPI_Type_vector(2, 1, 3, MPI_INT, &a));
//     CT_TRY(MPI_Type_create_resized(a, 0, 4, &b));
//     CT_TRY(MPI_Type_contiguous(3, b, out));
//     CT_TRY(MPI_Type_free(&a));
//     return MPI_Type_free(&b);
//   case ct_subarray_c:
//   case ct_subarray_fortran: {
//     int sz[3] = {4, 5, 6}, sub[3] = {2, 3, 4}, st[3] = {1, 1, 1};
//     int order = id == ct_subarray_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
//     return MPI_Type_create_subarray(3, sz, sub, st, order, MPI_INT, out);
//   }
//   case ct_subarray_of_resized_struct: {
//     int bl[2] = {1, 1}, sz[2] = {3, 4}, sub[2] = {2, 2}, st[2] = {1, 1};
//     MPI_Aint d[2] = {0, 8};
//     MPI_Datatype t[2] = {MPI_SHORT, MPI_INT};
//     CT_TRY(MPI_Type_create_struct(2, bl, d, t, &a));
//     CT_TRY(MPI_Type_create_resized(a, -4, 16, &b));
//     CT_TRY(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, b, out));
//     CT_TRY(MPI_Type_free(&a));
//     return MPI_Type_free(&b);
//   }
//   case ct_dup_contig_dup:
//     CT_TRY(MPI_Type_dup(MPI_DOUBLE, &a));
//     CT_TRY(MPI_Type_contiguous(3, a, &b));
//     CT_TRY(MPI_Type_dup(b, out));
//     CT_TRY(MPI_Type_free(&a));
//     return MPI_Type_free(&b);
//   }
//   return MPI_ERR_ARG;
// }
// static int collio_ct_build(int id, int rank, MPI_Datatype *out) {
//   switch (id) {
//   case ct_named:     *out = MPI_INT; return MPI_SUCCESS;
//   case ct_short_int: *out = MPI_SHORT_INT; return MPI_SUCCESS;
//   case ct_darray_block_cyclic2_none:
//   case ct_darray_cyclic2_block_cyclic:
//     CT_TRY(collio_ct_darray(id, rank, out));
//     break;
//   default:
//     CT_TRY(collio_ct_derived(id, out));
//   }
//   return MPI_Type_commit(out);
// }
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/collio/collio/internal/mpi"
)

// CType is a datatype built in C by the verification list.
type CType struct {
	Name       string
	Type       mpi.Datatype
	predefined bool // MPI owns it: not freed
}

// cTypeList names the C builders; ranks > 0 means "build for every rank of
// a process grid of that size" (the darrays).
var cTypeList = []struct {
	id    C.int
	name  string
	ranks int
}{ // (ct_named and ct_short_int are the predefined ones)
	{C.ct_named, "named MPI_INT", 0},
	{C.ct_contiguous, "contiguous", 0},
	{C.ct_vector, "vector", 0},
	{C.ct_hvector_of_vector, "hvector(vector)", 0},
	{C.ct_indexed, "indexed", 0},
	{C.ct_indexed_block_short, "indexed_block(short)", 0},
	{C.ct_hindexed_double, "hindexed(double)", 0},
	{C.ct_hindexed_block_negative, "hindexed_block negative displacement", 0},
	{C.ct_struct_mixed, "struct char/double/int[3]/vector at -40", 0},
	{C.ct_resized_interleave, "resized interleave", 0},
	{C.ct_subarray_c, "subarray 3-D C order", 0},
	{C.ct_subarray_fortran, "subarray 3-D Fortran order", 0},
	{C.ct_darray_block_cyclic2_none, "darray BLOCK x CYCLIC(2) x NONE on 2x3x1 C", 6},
	{C.ct_darray_cyclic2_block_cyclic, "darray CYCLIC(2) x BLOCK x CYCLIC on 2x2x2 Fortran double", 8},
	{C.ct_subarray_of_resized_struct, "subarray of resized noncontiguous struct", 0},
	{C.ct_short_int, "named MPI_SHORT_INT", 0},
	{C.ct_dup_contig_dup, "dup(contig(dup))", 0},
}

// CTypes builds the verification types, committed. Release them with
// FreeCTypes (which skips the predefined ones).
func CTypes() ([]CType, error) {
	var out []CType
	for _, e := range cTypeList {
		ranks := max(e.ranks, 1)
		for r := range ranks {
			name := e.name
			if e.ranks > 0 {
				name = fmt.Sprintf("%s rank %d", e.name, r)
			}
			var t C.MPI_Datatype
			if err := mpi.CodeError(int(C.collio_ct_build(e.id, C.int(r), &t)), "build "+name); err != nil {
				FreeCTypes(out)
				return nil, err
			}
			predefined := e.id == C.ct_named || e.id == C.ct_short_int
			out = append(out, CType{Name: name, Type: mpi.DatatypeFromPointer(unsafe.Pointer(t)), predefined: predefined})
		}
	}
	return out, nil
}

// FreeCTypes frees the derived types CTypes built.
func FreeCTypes(ts []CType) {
	for _, ct := range ts {
		if !ct.predefined {
			_ = ct.Type.Free()
		}
	}
}

// CTypeF90Real returns MPI_Type_create_f90_real(6, 30): a type whose
// combiner (F90_REAL) Layout does not support. It is predefined-like:
// MPI owns it and it must not be freed.
func CTypeF90Real() (mpi.Datatype, error) {
	var t C.MPI_Datatype
	if err := mpi.CodeError(int(C.MPI_Type_create_f90_real(6, 30, &t)), "MPI_Type_create_f90_real"); err != nil {
		return mpi.Datatype{}, err
	}
	return mpi.DatatypeFromPointer(unsafe.Pointer(t)), nil
}
