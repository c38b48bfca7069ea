package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"unsafe"

	"github.com/collio/collio/internal/ioerr"
)

// MPI_Aint must be 64 bits: contents has MPI fill an []int64.
var _ [8 - unsafe.Sizeof(C.MPI_Aint(0))]struct{}
var _ [unsafe.Sizeof(C.MPI_Aint(0)) - 8]struct{}

// envelope is what MPI_Type_get_envelope reports: how t was built and how
// many arguments its constructor took.
type envelope struct {
	ints, addrs, types int
	combiner           C.int
}

// contents are the constructor arguments MPI_Type_get_contents returns.
// The types are new handles for derived children; see freeChildren.
type contents struct {
	ints  []int
	addrs []int64
	types []Datatype
}

func (t Datatype) envelope() (envelope, error) {
	if t.unusable() {
		return envelope{}, errNullType("MPI_Type_get_envelope")
	}
	var ni, na, nd, comb C.int
	if err := check(C.MPI_Type_get_envelope(t.t, &ni, &na, &nd, &comb), "MPI_Type_get_envelope"); err != nil {
		return envelope{}, err
	}
	if ni < 0 || na < 0 || nd < 0 {
		return envelope{}, ioerr.New(ioerr.ErrType, "MPI_Type_get_envelope",
			"negative argument counts %d/%d/%d", int(ni), int(na), int(nd))
	}
	return envelope{ints: int(ni), addrs: int(na), types: int(nd), combiner: comb}, nil
}

// contents must not be called for NAMED types (MPI forbids it).
func (t Datatype) contents(env envelope) (contents, error) {
	ints := make([]C.int, env.ints)
	// MPI writes the addresses straight into the []int64 returned (an
	// E3SM flush's type has 10^5-10^6 of them): MPI_Aint is 64 bits here.
	var c contents
	c.addrs = make([]int64, env.addrs)
	types := make([]C.MPI_Datatype, env.types)
	var pi *C.int
	var pa *C.MPI_Aint
	var pt *C.MPI_Datatype
	if len(ints) > 0 {
		pi = &ints[0]
	}
	if len(c.addrs) > 0 {
		pa = (*C.MPI_Aint)(unsafe.Pointer(&c.addrs[0]))
	}
	if len(types) > 0 {
		pt = &types[0]
	}
	rc := C.MPI_Type_get_contents(t.t, C.int(env.ints), C.int(env.addrs), C.int(env.types), pi, pa, pt)
	if err := check(rc, "MPI_Type_get_contents"); err != nil {
		return contents{}, err
	}
	c.ints = make([]int, len(ints))
	for i, v := range ints {
		c.ints[i] = int(v)
	}
	c.types = make([]Datatype, len(types))
	for i, v := range types {
		c.types[i] = Datatype{v}
	}
	return c, nil
}

// freeChildren frees the child handles get_contents returned. Predefined
// children (named and F90 types) are not copies and must not be freed.
func (c contents) freeChildren() {
	for _, ch := range c.types {
		if predefined, err := ch.isPredefined(); err == nil && !predefined {
			_ = ch.Free()
		}
	}
}
