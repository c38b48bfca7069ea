package layout

// Distrib is how one dimension of a distributed array is spread over the
// process grid (MPI_DISTRIBUTE_*).
type Distrib int

const (
	DistribBlock  Distrib = iota // contiguous blocks of ceil(g/p) (or darg) elements
	DistribCyclic                // blocks of darg (default 1) elements dealt round-robin
	DistribNone                  // not distributed: every process has the whole dimension
)

// DargDefault asks for the default distribution argument
// (MPI_DISTRIBUTE_DFLT_DARG).
const DargDefault = -1

// Darray is the part of a gsizes array of t owned by process rank of size
// processes on a row-major psizes grid (MPI_Type_create_darray, MPI-3.1
// §4.1.4). Its lb is 0 and its extent the whole array.
func Darray(size, rank int, gsizes []int, distribs []Distrib, dargs []int, psizes []int, order Order, t *Type) (*Type, error) {
	const op = "darray"
	if err := checkDarray(op, size, rank, gsizes, distribs, dargs, psizes, order, t); err != nil {
		return nil, err
	}
	n := len(gsizes)
	coords := gridCoords(rank, psizes)
	var b builder
	stride := t.Extent()
	body := t.root
	for _, d := range fastestFirst(n, order) {
		dim := darrayDim{g: int64(gsizes[d]), p: int64(psizes[d]), coord: int64(coords[d]),
			distrib: distribs[d], darg: int64(dargs[d])}
		body = dim.local(&b, body, stride)
		stride = b.mul(stride, dim.g)
	}
	bd := bounds{any: true, sticky: true, lb: 0, ub: stride}
	return newType(op, &b, body, bd)
}

// gridCoords maps rank to its coordinates in a row-major process grid.
func gridCoords(rank int, psizes []int) []int {
	coords := make([]int, len(psizes))
	for i := len(psizes) - 1; i >= 0; i-- {
		coords[i] = rank % psizes[i]
		rank /= psizes[i]
	}
	return coords
}

// darrayDim is one dimension of a darray as seen by one process.
type darrayDim struct {
	g, p, coord int64
	distrib     Distrib
	darg        int64
}

// local returns the process's elements of this dimension, each a copy of
// body at stride bytes per element, in increasing index order.
func (d darrayDim) local(b *builder, body node, stride int64) node {
	run := func(start, n int64) node { // elements [start, start+n)
		return b.repeat(b.mul(start, stride), n, stride, body)
	}
	switch d.distrib {
	case DistribNone:
		return run(0, d.g)
	case DistribBlock:
		blk := d.darg
		if blk == DargDefault {
			blk = (d.g + d.p - 1) / d.p
		}
		start := b.mul(d.coord, blk)
		return run(start, max64(0, min64(blk, d.g-start)))
	}
	blk := d.darg
	if blk == DargDefault {
		blk = 1
	}
	first := b.mul(d.coord, blk)
	if first >= d.g {
		return nil
	}
	period := b.mul(d.p, blk)
	nblocks := (d.g - first + period - 1) / period
	lastStart := first + (nblocks-1)*period
	lastLen := min64(blk, d.g-lastStart)
	full := nblocks
	if lastLen < blk {
		full--
	}
	fulls := b.repeat(b.mul(first, stride), full, b.mul(period, stride), run(0, blk))
	if full == nblocks {
		return fulls
	}
	return b.seq([]node{fulls, run(lastStart, lastLen)})
}

func checkDarray(op string, size, rank int, gsizes []int, distribs []Distrib, dargs []int, psizes []int, order Order, t *Type) error {
	if err := checkType(op, "oldtype", t); err != nil {
		return err
	}
	if err := checkOrder(op, order); err != nil {
		return err
	}
	if size <= 0 {
		return argErr(op, "size = %d must be positive", size)
	}
	if rank < 0 || rank >= size {
		return argErr(op, "rank = %d is outside [0, %d)", rank, size)
	}
	n := len(gsizes)
	if n == 0 {
		return argErr(op, "ndims = 0: gsizes is empty")
	}
	if len(distribs) != n || len(dargs) != n || len(psizes) != n {
		return argErr(op, "slice lengths differ: %d gsizes, %d distribs, %d dargs, %d psizes",
			n, len(distribs), len(dargs), len(psizes))
	}
	var c checker
	nprocs := int64(1)
	for i := range n {
		if err := checkDarrayDim(op, i, gsizes[i], distribs[i], dargs[i], psizes[i]); err != nil {
			return err
		}
		nprocs = c.mul(nprocs, int64(psizes[i]))
	}
	if c.overflow || nprocs != int64(size) {
		return argErr(op, "product of psizes %v is not size = %d", psizes, size)
	}
	return nil
}

func checkDarrayDim(op string, i, g int, distrib Distrib, darg, p int) error {
	switch {
	case g <= 0:
		return argErr(op, "gsizes[%d] = %d must be positive", i, g)
	case p <= 0:
		return argErr(op, "psizes[%d] = %d must be positive", i, p)
	case darg != DargDefault && darg <= 0:
		return argErr(op, "dargs[%d] = %d must be positive or DargDefault", i, darg)
	}
	switch distrib {
	case DistribNone:
		if p != 1 {
			return argErr(op, "psizes[%d] = %d must be 1 for DistribNone", i, p)
		}
	case DistribBlock:
		var c checker
		if prod := c.mul(int64(darg), int64(p)); darg != DargDefault && !c.overflow && prod < int64(g) {
			return argErr(op, "dargs[%d] * psizes[%d] = %d * %d is less than gsizes[%d] = %d",
				i, i, darg, p, i, g)
		}
	case DistribCyclic:
	default:
		return argErr(op, "distribs[%d] = %d is not a distribution", i, int(distrib))
	}
	return nil
}
