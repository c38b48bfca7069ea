// Package layout describes data layouts the way MPI derived datatypes do: an
// ordered typemap of (byte offset, length) blocks with a lower bound and an
// extent. File views (etype/filetype tiled from a displacement) and
// noncontiguous memory buffers are both described by a *Type.
//
// A Type is stored flattened but compact: a small tree of blocks, repeats
// (a body replicated at a constant stride) and sequences (concatenation in
// typemap order). Regular types such as subarrays therefore cost a few nodes
// however many blocks they describe, and a Stream can seek to any data byte
// in O(tree depth × log(sequence width)).
//
// Semantics follow MPI-3.1 §4.1, with two deliberate differences: no
// alignment padding is ever added to upper bounds (collio does not emulate C
// struct padding), and Resized rejects negative extents.
//
// Lower and upper bounds follow the standard's marker rule: Resized (and
// Subarray/Darray, which are resized types) sets "sticky" lb/ub markers; a
// derived type whose children carry markers takes its bounds from the markers
// only, otherwise from the data (min offset, max end). A type with no data and
// no markers has lb = ub = 0.
package layout
