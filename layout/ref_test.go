package layout

// A naive reference: types described by their constructor arguments (spec)
// and expanded by brute force into the full MPI typemap, with lb/ub markers
// kept as separate entries exactly as MPI-3.1 §4.1.6 defines them. It shares
// no code with the tree representation.

import (
	"fmt"

	"pgregory.net/rapid"
)

type spec struct {
	kind                    string
	n                       int64 // basic: bytes
	count, blocklen         int
	stride                  int64 // vector: extents; hvector: bytes
	blocklens               []int
	displs                  []int64 // indexed*: extents; hindexed*/struct: bytes
	kids                    []*spec
	sizes, subsizes, starts []int
	order                   Order
	size, rank              int
	distribs                []Distrib
	dargs, psizes           []int
	lb, ext                 int64
}

// ent is one data entry of a typemap.
type ent struct{ off, n int64 }

// refT is an expanded typemap: data entries in order plus lb/ub markers.
type refT struct {
	ents     []ent
	lbs, ubs []int64
}

func (r refT) bounds() (lb, ub int64) {
	if len(r.lbs) > 0 {
		lb, ub = r.lbs[0], r.ubs[0]
		for _, v := range r.lbs {
			lb = min(lb, v)
		}
		for _, v := range r.ubs {
			ub = max(ub, v)
		}
		return lb, ub
	}
	if len(r.ents) == 0 {
		return 0, 0
	}
	lb, ub = r.ents[0].off, r.ents[0].off+r.ents[0].n
	for _, e := range r.ents {
		lb, ub = min(lb, e.off), max(ub, e.off+e.n)
	}
	return lb, ub
}

func (r refT) extent() int64 { lb, ub := r.bounds(); return ub - lb }

func (r refT) size() (s int64) {
	for _, e := range r.ents {
		s += e.n
	}
	return s
}

// place appends a copy of child shifted by d.
func (r *refT) place(child refT, d int64) {
	for _, e := range child.ents {
		r.ents = append(r.ents, ent{e.off + d, e.n})
	}
	for _, v := range child.lbs {
		r.lbs = append(r.lbs, v+d)
	}
	for _, v := range child.ubs {
		r.ubs = append(r.ubs, v+d)
	}
}

// merged is the list of blocks with adjacent entries joined.
func (r refT) merged() []ent {
	var out []ent
	for _, e := range r.ents {
		if k := len(out) - 1; k >= 0 && out[k].off+out[k].n == e.off {
			out[k].n += e.n
			continue
		}
		out = append(out, e)
	}
	return out
}

// bytesOf lists the offset of every data byte in typemap order.
func (r refT) bytesOf() []int64 {
	var out []int64
	for _, e := range r.ents {
		for k := int64(0); k < e.n; k++ {
			out = append(out, e.off+k)
		}
	}
	return out
}

func expand(s *spec) refT {
	var r refT
	switch s.kind {
	case "bytes":
		if s.n > 0 {
			r.ents = []ent{{0, s.n}}
		}
	case "contiguous":
		c := expand(s.kids[0])
		for i := 0; i < s.count; i++ {
			r.place(c, int64(i)*c.extent())
		}
	case "vector", "hvector":
		c := expand(s.kids[0])
		stride := s.stride
		if s.kind == "vector" {
			stride *= c.extent()
		}
		for i := 0; i < s.count; i++ {
			for j := 0; j < s.blocklen; j++ {
				r.place(c, int64(i)*stride+int64(j)*c.extent())
			}
		}
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		for i, bl := range s.blocklens {
			k := s.kids[0]
			if s.kind == "struct" {
				k = s.kids[i]
			}
			c := expand(k)
			d := s.displs[i]
			if s.kind == "indexed" || s.kind == "indexedblock" {
				d *= c.extent()
			}
			for j := 0; j < bl; j++ {
				r.place(c, d+int64(j)*c.extent())
			}
		}
	case "resized":
		c := expand(s.kids[0])
		r.ents = c.ents
		r.lbs, r.ubs = []int64{s.lb}, []int64{s.lb + s.ext}
	case "subarray":
		c := expand(s.kids[0])
		forEachElement(s.sizes, s.order, func(lin int64, idx []int) {
			for d := range idx {
				if idx[d] < s.starts[d] || idx[d] >= s.starts[d]+s.subsizes[d] {
					return
				}
			}
			r.place(c, lin*c.extent())
		})
		r.lbs, r.ubs = []int64{0}, []int64{product(s.sizes) * c.extent()}
	case "darray":
		c := expand(s.kids[0])
		coords := make([]int, len(s.psizes))
		rest := s.rank
		for d := len(s.psizes) - 1; d >= 0; d-- {
			coords[d] = rest % s.psizes[d]
			rest /= s.psizes[d]
		}
		forEachElement(s.sizes, s.order, func(lin int64, idx []int) {
			for d := range idx {
				if refOwner(idx[d], s.sizes[d], s.psizes[d], s.distribs[d], s.dargs[d]) != coords[d] {
					return
				}
			}
			r.place(c, lin*c.extent())
		})
		r.lbs, r.ubs = []int64{0}, []int64{product(s.sizes) * c.extent()}
	default:
		panic("unknown kind " + s.kind)
	}
	return r
}

// refOwner is the grid coordinate owning index i of a dimension.
func refOwner(i, g, p int, d Distrib, darg int) int {
	switch d {
	case DistribNone:
		return 0
	case DistribBlock:
		if darg == DargDefault {
			darg = (g + p - 1) / p
		}
		return i / darg
	}
	if darg == DargDefault {
		darg = 1
	}
	return (i / darg) % p
}

func product(v []int) int64 {
	p := int64(1)
	for _, x := range v {
		p *= int64(x)
	}
	return p
}

// forEachElement visits every element of an array in storage order with its
// linear index and multi-index.
func forEachElement(sizes []int, order Order, fn func(lin int64, idx []int)) {
	n := len(sizes)
	idx := make([]int, n)
	total := product(sizes)
	for lin := int64(0); lin < total; lin++ {
		rest := lin
		for k := 0; k < n; k++ {
			d := k // Fortran: first index fastest
			if order == OrderC {
				d = n - 1 - k
			}
			idx[d] = int(rest % int64(sizes[d]))
			rest /= int64(sizes[d])
		}
		fn(lin, idx)
	}
}

// build constructs the spec through the package API.
func build(s *spec) (*Type, error) {
	kids := make([]*Type, len(s.kids))
	for i, k := range s.kids {
		t, err := build(k)
		if err != nil {
			return nil, err
		}
		kids[i] = t
	}
	ints := func(v []int64) []int {
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out
	}
	switch s.kind {
	case "bytes":
		return Bytes(s.n), nil
	case "contiguous":
		return Contiguous(s.count, kids[0])
	case "vector":
		return Vector(s.count, s.blocklen, int(s.stride), kids[0])
	case "hvector":
		return HVector(s.count, s.blocklen, s.stride, kids[0])
	case "indexed":
		return Indexed(s.blocklens, ints(s.displs), kids[0])
	case "hindexed":
		return HIndexed(s.blocklens, s.displs, kids[0])
	case "indexedblock":
		return IndexedBlock(s.blocklen, ints(s.displs), kids[0])
	case "hindexedblock":
		return HIndexedBlock(s.blocklen, s.displs, kids[0])
	case "struct":
		return Struct(s.blocklens, s.displs, kids)
	case "resized":
		return Resized(kids[0], s.lb, s.ext)
	case "subarray":
		return Subarray(s.sizes, s.subsizes, s.starts, s.order, kids[0])
	case "darray":
		return Darray(s.size, s.rank, s.sizes, s.distribs, s.dargs, s.psizes, s.order, kids[0])
	}
	return nil, fmt.Errorf("unknown kind %q", s.kind)
}

var kinds = []string{"bytes", "contiguous", "vector", "hvector", "indexed", "hindexed",
	"indexedblock", "hindexedblock", "struct", "resized", "subarray", "darray"}

// genSpec draws a random valid type description of at most depth levels.
func genSpec(t *rapid.T, depth int) *spec {
	kind := "bytes"
	if depth > 0 {
		kind = rapid.SampledFrom(kinds[1:]).Draw(t, "kind")
	}
	s := &spec{kind: kind}
	kid := func() *spec { return genSpec(t, depth-1) }
	small := func(name string, lo, hi int) int { return rapid.IntRange(lo, hi).Draw(t, name) }
	// count is rarely 0: empty types are tested, but most draws carry data.
	count := func(name string, hi int) int {
		if rapid.IntRange(0, 1000).Draw(t, name+" is 0")%33 == 7 {
			return 0
		}
		return rapid.IntRange(1, hi).Draw(t, name)
	}
	switch kind {
	case "bytes":
		s.n = int64(small("n", 1, 4))
		if rapid.IntRange(0, 1000).Draw(t, "empty")%33 == 7 {
			s.n = 0
		}
	case "contiguous":
		s.count, s.kids = count("count", 4), []*spec{kid()}
	case "vector", "hvector":
		s.count, s.blocklen = count("count", 3), count("blocklen", 3)
		if kind == "vector" {
			s.stride = int64(small("stride", -4, 4))
		} else {
			s.stride = int64(small("stride", -24, 24))
		}
		s.kids = []*spec{kid()}
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		n := count("nblocks", 5)
		if kind == "struct" {
			n = small("nblocks", 1, 3)
		}
		bl := count("blocklen", 3)
		s.blocklen = bl
		for i := 0; i < n; i++ {
			if kind == "indexedblock" || kind == "hindexedblock" {
				s.blocklens = append(s.blocklens, bl)
			} else {
				s.blocklens = append(s.blocklens, count("bl", 3))
			}
			if kind == "indexed" || kind == "indexedblock" {
				s.displs = append(s.displs, int64(small("displ", -5, 8)))
			} else {
				s.displs = append(s.displs, int64(small("displ", -30, 40)))
			}
			if kind == "struct" || i == 0 {
				s.kids = append(s.kids, kid())
			}
		}
		if len(s.kids) == 0 {
			s.kids = []*spec{kid()}
		}
	case "resized":
		s.lb, s.ext = int64(small("lb", -12, 12)), int64(small("ext", 0, 24))
		s.kids = []*spec{kid()}
	case "subarray":
		nd := small("ndims", 1, 3)
		for i := 0; i < nd; i++ {
			size := small("size", 1, 4)
			sub := min(size, count("subsize", size))
			s.sizes = append(s.sizes, size)
			s.subsizes = append(s.subsizes, sub)
			s.starts = append(s.starts, small("start", 0, size-sub))
		}
		s.order = Order(small("order", 0, 1))
		s.kids = []*spec{kid()}
	case "darray":
		nd := small("ndims", 1, 3)
		s.size = 1
		for i := 0; i < nd; i++ {
			g := small("gsize", 1, 6)
			d := Distrib(small("distrib", 0, 2))
			p := 1
			if d != DistribNone {
				p = small("psize", 1, 3)
			}
			darg := DargDefault
			if d == DistribCyclic && rapid.Bool().Draw(t, "cyclic darg") {
				darg = small("darg", 1, 3)
			}
			if d == DistribBlock && rapid.Bool().Draw(t, "block darg") {
				darg = small("darg", (g+p-1)/p, (g+p-1)/p+2)
			}
			s.sizes, s.distribs = append(s.sizes, g), append(s.distribs, d)
			s.psizes, s.dargs = append(s.psizes, p), append(s.dargs, darg)
			s.size *= p
		}
		s.rank = small("rank", 0, s.size-1)
		s.order = Order(small("order", 0, 1))
		s.kids = []*spec{kid()}
	}
	return s
}

// specBlocks is the block-count limit above which a drawn spec is replaced
// by a simpler one, to keep the brute-force reference fast.
const specBlocks = 4000

// drawType draws a spec, its built type and its reference expansion.
func drawType(t *rapid.T, depth int) (*spec, *Type, refT) {
	s := genSpec(t, depth)
	r := expand(s)
	if len(r.ents) > specBlocks {
		s = genSpec(t, 1)
		r = expand(s)
	}
	typ, err := build(s)
	if err != nil {
		t.Fatalf("building %+v: %v", s, err)
	}
	return s, typ, r
}
