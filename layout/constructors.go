package layout

// Order is the storage order of a multidimensional array.
type Order int

const (
	OrderC       Order = iota // row-major: the last index varies fastest
	OrderFortran              // column-major: the first index varies fastest
)

func checkType(op, name string, t *Type) error {
	if t == nil {
		return typeErr(op, "%s is nil", name)
	}
	return nil
}

func checkCount(op, name string, v int) error {
	if v < 0 {
		return argErr(op, "%s = %d is negative", name, v)
	}
	return nil
}

// Contiguous replicates t count times at stride Extent(t).
func Contiguous(count int, t *Type) (*Type, error) {
	const op = "contiguous"
	if err := checkType(op, "oldtype", t); err != nil {
		return nil, err
	}
	if err := checkCount(op, "count", count); err != nil {
		return nil, err
	}
	return hvector(op, 1, int64(count), 0, t)
}

// Vector is count blocks of blocklen copies of t, the blocks stride extents
// of t apart.
func Vector(count, blocklen, stride int, t *Type) (*Type, error) {
	const op = "vector"
	if err := checkVector(op, count, blocklen, t); err != nil {
		return nil, err
	}
	var c checker
	s := c.mul(int64(stride), t.Extent())
	if c.overflow {
		return nil, errTooLarge(op)
	}
	return hvector(op, int64(count), int64(blocklen), s, t)
}

// HVector is Vector with the stride in bytes.
func HVector(count, blocklen int, stride int64, t *Type) (*Type, error) {
	const op = "hvector"
	if err := checkVector(op, count, blocklen, t); err != nil {
		return nil, err
	}
	return hvector(op, int64(count), int64(blocklen), stride, t)
}

func checkVector(op string, count, blocklen int, t *Type) error {
	if err := checkType(op, "oldtype", t); err != nil {
		return err
	}
	if err := checkCount(op, "count", count); err != nil {
		return err
	}
	return checkCount(op, "blocklength", blocklen)
}

// hvector builds count blocks of blocklen copies of t, stride bytes apart.
func hvector(op string, count, blocklen, stride int64, t *Type) (*Type, error) {
	var b builder
	ext := t.Extent()
	inner := b.repeat(0, blocklen, ext, t.root)
	root := b.repeat(0, count, stride, inner)
	var bd bounds
	if count > 0 && blocklen > 0 {
		span := b.mul(count-1, stride)
		bd.place(&b.checker, t, min64(0, span), b.add(max64(0, span), b.mul(blocklen-1, ext)))
	}
	return newType(op, &b, root, bd)
}

// Indexed places blocklens[i] copies of t at displs[i] extents of t.
func Indexed(blocklens, displs []int, t *Type) (*Type, error) {
	const op = "indexed"
	if err := checkType(op, "oldtype", t); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) {
		return nil, argErr(op, "len(blocklengths) = %d but len(displacements) = %d", len(blocklens), len(displs))
	}
	var c checker
	bytes := make([]int64, len(displs))
	for i, d := range displs {
		bytes[i] = c.mul(int64(d), t.Extent())
	}
	if c.overflow {
		return nil, errTooLarge(op)
	}
	return hindexed(op, blocklens, bytes, t)
}

// HIndexed is Indexed with displacements in bytes.
func HIndexed(blocklens []int, displs []int64, t *Type) (*Type, error) {
	const op = "hindexed"
	if err := checkType(op, "oldtype", t); err != nil {
		return nil, err
	}
	if len(blocklens) != len(displs) {
		return nil, argErr(op, "len(blocklengths) = %d but len(displacements) = %d", len(blocklens), len(displs))
	}
	return hindexed(op, blocklens, displs, t)
}

// IndexedBlock is Indexed with one block length for all blocks.
func IndexedBlock(blocklen int, displs []int, t *Type) (*Type, error) {
	return Indexed(repeatLen(blocklen, len(displs)), displs, t)
}

// HIndexedBlock is HIndexed with one block length for all blocks.
func HIndexedBlock(blocklen int, displs []int64, t *Type) (*Type, error) {
	return HIndexed(repeatLen(blocklen, len(displs)), displs, t)
}

func repeatLen(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func hindexed(op string, blocklens []int, displs []int64, t *Type) (*Type, error) {
	if lt, ok := listOfOne(op, blocklens, displs, t); ok {
		return lt, nil // no slice of n types to build first
	}
	types := make([]*Type, len(blocklens))
	for i := range types {
		types[i] = t
	}
	return structGeneral(op, blocklens, displs, types)
}

// Struct places blocklens[i] copies of types[i] at byte displacement
// displs[i]. No alignment padding is added to the upper bound.
func Struct(blocklens []int, displs []int64, types []*Type) (*Type, error) {
	const op = "struct"
	if len(blocklens) != len(displs) || len(blocklens) != len(types) {
		return nil, argErr(op, "slice lengths differ: %d blocklengths, %d displacements, %d types",
			len(blocklens), len(displs), len(types))
	}
	for i, t := range types {
		if t == nil {
			return nil, typeErr(op, "types[%d] is nil", i)
		}
	}
	return structOf(op, blocklens, displs, types)
}

func structOf(op string, blocklens []int, displs []int64, types []*Type) (*Type, error) {
	if t, ok := listOfContiguous(op, blocklens, displs, types); ok {
		return t, nil
	}
	return structGeneral(op, blocklens, displs, types)
}

// structGeneral builds a struct node by node (see listOfContiguous).
func structGeneral(op string, blocklens []int, displs []int64, types []*Type) (*Type, error) {
	var b builder
	var bd bounds
	items := make([]node, 0, len(blocklens))
	for i, n := range blocklens {
		if n < 0 {
			return nil, argErr(op, "blocklengths[%d] = %d is negative", i, n)
		}
		if n == 0 {
			continue
		}
		t, ext := types[i], types[i].Extent()
		items = append(items, b.repeat(displs[i], int64(n), ext, t.root))
		bd.place(&b.checker, t, displs[i], b.add(displs[i], b.mul(int64(n-1), ext)))
	}
	return newType(op, &b, b.seq(items), bd)
}

// Resized gives t the lower bound lb and the extent extent (MPI
// MPI_Type_create_resized). A negative extent is rejected.
func Resized(t *Type, lb, extent int64) (*Type, error) {
	const op = "resized"
	if err := checkType(op, "oldtype", t); err != nil {
		return nil, err
	}
	if extent < 0 {
		return nil, argErr(op, "extent = %d is negative", extent)
	}
	var c checker
	ub := c.add(lb, extent)
	if c.overflow {
		return nil, errTooLarge(op)
	}
	return makeType(t.root, lb, ub, true), nil
}
