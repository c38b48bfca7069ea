package layout

// Bytes returns a basic type of n contiguous bytes with lb 0 and extent n.
// n <= 0 gives the empty type (size 0, extent 0).
func Bytes(n int64) *Type {
	if n <= 0 {
		return &Type{}
	}
	var b builder
	return makeType(b.block(0, n), 0, n, false)
}

// The basic types collio needs; MPI's predefined types map onto these by size.
var (
	Byte    = Bytes(1)
	Int16   = Bytes(2)
	Int32   = Bytes(4)
	Int64   = Bytes(8)
	Float32 = Bytes(4)
	Float64 = Bytes(8)
)
