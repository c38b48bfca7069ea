package mpi

// #cgo pkg-config: ompi-c
// #include <mpi.h>
import "C"

import (
	"fmt"
	"sync"

	"github.com/collio/collio/layout"
)

// combinerNames names the combiners Layout understands, for messages.
var combinerNames = map[C.int]string{
	C.MPI_COMBINER_NAMED:          "MPI_COMBINER_NAMED",
	C.MPI_COMBINER_DUP:            "MPI_COMBINER_DUP",
	C.MPI_COMBINER_CONTIGUOUS:     "MPI_COMBINER_CONTIGUOUS",
	C.MPI_COMBINER_VECTOR:         "MPI_COMBINER_VECTOR",
	C.MPI_COMBINER_HVECTOR:        "MPI_COMBINER_HVECTOR",
	C.MPI_COMBINER_INDEXED:        "MPI_COMBINER_INDEXED",
	C.MPI_COMBINER_HINDEXED:       "MPI_COMBINER_HINDEXED",
	C.MPI_COMBINER_INDEXED_BLOCK:  "MPI_COMBINER_INDEXED_BLOCK",
	C.MPI_COMBINER_HINDEXED_BLOCK: "MPI_COMBINER_HINDEXED_BLOCK",
	C.MPI_COMBINER_STRUCT:         "MPI_COMBINER_STRUCT",
	C.MPI_COMBINER_SUBARRAY:       "MPI_COMBINER_SUBARRAY",
	C.MPI_COMBINER_DARRAY:         "MPI_COMBINER_DARRAY",
	C.MPI_COMBINER_RESIZED:        "MPI_COMBINER_RESIZED",
}

// otherCombiners names the ones it does not, so that the error says which.
var otherCombiners = map[C.int]string{
	C.MPI_COMBINER_F90_REAL:    "MPI_COMBINER_F90_REAL",
	C.MPI_COMBINER_F90_COMPLEX: "MPI_COMBINER_F90_COMPLEX",
	C.MPI_COMBINER_F90_INTEGER: "MPI_COMBINER_F90_INTEGER",
}

// Layout decodes t, a datatype built by any MPI program, into collio's
// compact layout by walking its constructors (MPI_Type_get_envelope and
// MPI_Type_get_contents). Subarrays and darrays stay in their compact form;
// nothing is expanded per element. At every level the size and true
// bounds are checked against what MPI reports, and the lower bound and
// extent are MPI's (see reconcile).
func (t Datatype) Layout() (*layout.Type, error) { return t.decode() }

// namedLayouts caches the layouts of predefined datatypes by handle: they
// are decoded in every transfer from C (MPI_BYTE, MPI_INT, ...), their
// handles are never freed, and so never reused for another type. Derived
// types are decoded each time: a freed handle may come back as another
// type.
var namedLayouts sync.Map

func (t Datatype) decode() (*layout.Type, error) {
	lt, _, err := t.decodeKeeping(false) // no recipe without keep
	return lt, err
}

// decodeKeeping is decode; with keep, a derived type's constructor
// arguments come back too, as a Recipe that holds the child handles (the
// caller frees it).
func (t Datatype) decodeKeeping(keep bool) (*layout.Type, *Recipe, error) {
	if lt, ok := namedLayouts.Load(t.t); ok {
		return lt.(*layout.Type), nil, nil
	}
	env, err := t.envelope()
	if err != nil {
		return nil, nil, err
	}
	if env.combiner == C.MPI_COMBINER_NAMED {
		lt, err := decodeNamed(t)
		if err == nil {
			namedLayouts.Store(t.t, lt)
		}
		return lt, nil, err
	}
	c, lt, err := t.decodeDerived(env)
	if !keep || err != nil {
		c.freeChildren()
		return lt, nil, err
	}
	return lt, &Recipe{combiner: env.combiner, c: c}, nil
}

// decodeDerived decodes a derived type with envelope env, and returns its
// constructor's arguments, whose child handles the caller frees.
func (t Datatype) decodeDerived(env envelope) (contents, *layout.Type, error) {
	name, ok := combinerNames[env.combiner]
	if !ok {
		if other, known := otherCombiners[env.combiner]; known {
			return contents{}, nil, decodeUnsupported(other, "not supported (type %s)", t.describe())
		}
		return contents{}, nil, decodeUnsupported(fmt.Sprintf("combiner %d", int(env.combiner)), "unknown combiner (type %s)", t.describe())
	}
	c, err := t.contents(env)
	if err != nil {
		return contents{}, nil, decodeWrap(name, err)
	}
	kids := make([]*layout.Type, len(c.types))
	for i, child := range c.types {
		if kids[i], err = child.decode(); err != nil {
			return c, nil, decodeWrap(name, err)
		}
	}
	lt, err := build(env.combiner, c, kids)
	if err != nil {
		return c, nil, decodeWrap(name, err)
	}
	lt, err = t.reconcile(lt)
	return c, lt, decodeWrap(name, err)
}

// build calls the layout constructor matching the MPI one. Argument
// layouts are those of MPI_Type_get_contents (MPI-3.1 §4.1.13).
func build(comb C.int, c contents, kids []*layout.Type) (*layout.Type, error) {
	switch comb {
	case C.MPI_COMBINER_DUP:
		if err := c.want(0, 0, 1); err != nil {
			return nil, err
		}
		return kids[0], nil
	case C.MPI_COMBINER_CONTIGUOUS:
		if err := c.want(1, 0, 1); err != nil {
			return nil, err
		}
		return layout.Contiguous(c.ints[0], kids[0])
	case C.MPI_COMBINER_VECTOR:
		if err := c.want(3, 0, 1); err != nil {
			return nil, err
		}
		return layout.Vector(c.ints[0], c.ints[1], c.ints[2], kids[0])
	case C.MPI_COMBINER_HVECTOR:
		if err := c.want(2, 1, 1); err != nil {
			return nil, err
		}
		return layout.HVector(c.ints[0], c.ints[1], c.addrs[0], kids[0])
	case C.MPI_COMBINER_INDEXED:
		n, err := c.count(func(n int) (int, int, int) { return 1 + 2*n, 0, 1 })
		if err != nil {
			return nil, err
		}
		return layout.Indexed(c.ints[1:1+n], c.ints[1+n:], kids[0])
	case C.MPI_COMBINER_HINDEXED:
		n, err := c.count(func(n int) (int, int, int) { return 1 + n, n, 1 })
		if err != nil {
			return nil, err
		}
		return layout.HIndexed(c.ints[1:1+n], c.addrs, kids[0])
	case C.MPI_COMBINER_INDEXED_BLOCK:
		if _, err := c.count(func(n int) (int, int, int) { return 2 + n, 0, 1 }); err != nil {
			return nil, err
		}
		return layout.IndexedBlock(c.ints[1], c.ints[2:], kids[0])
	case C.MPI_COMBINER_HINDEXED_BLOCK:
		if _, err := c.count(func(n int) (int, int, int) { return 2, n, 1 }); err != nil {
			return nil, err
		}
		return layout.HIndexedBlock(c.ints[1], c.addrs, kids[0])
	case C.MPI_COMBINER_STRUCT:
		n, err := c.count(func(n int) (int, int, int) { return 1 + n, n, n })
		if err != nil {
			return nil, err
		}
		return layout.Struct(c.ints[1:1+n], c.addrs, kids)
	case C.MPI_COMBINER_RESIZED:
		if err := c.want(0, 2, 1); err != nil {
			return nil, err
		}
		return layout.Resized(kids[0], c.addrs[0], c.addrs[1])
	case C.MPI_COMBINER_SUBARRAY, C.MPI_COMBINER_DARRAY:
		if len(kids) != 1 { // checked again with the ints, but needed first
			return nil, fmt.Errorf("get_contents returned %d types; expected 1", len(kids))
		}
		if comb == C.MPI_COMBINER_SUBARRAY {
			return buildSubarray(c, kids[0])
		}
		return buildDarray(c, kids[0])
	}
	return nil, fmt.Errorf("no layout constructor for combiner %d", int(comb))
}

// reconcile checks lt against what MPI reports for t: the size and the
// true bounds (where the data lies) must agree, or decoding failed. The
// lower bound and extent are then taken from MPI when they differ, because
// they are partly implementation-defined: MPI-3.1 pads the upper bound of
// a type without an explicit one to the alignment of its elements (Open
// MPI does it for every combiner; layout never pads), and Open MPI lets
// members without data contribute their bounds. MPI's values are what the
// application's buffers and the parent types' strides are built on.
func (t Datatype) reconcile(lt *layout.Type) (*layout.Type, error) {
	size, err := t.Size()
	if err != nil {
		return nil, err
	}
	if lt.Size() != size {
		return nil, fmt.Errorf("decoded size %d, MPI reports %d", lt.Size(), size)
	}
	if size > 0 { // the true bounds of a type without data mean nothing
		tlb, text, err := t.TrueExtent()
		if err != nil {
			return nil, err
		}
		if lt.TrueLB() != tlb || lt.TrueExtent() != text {
			return nil, fmt.Errorf("decoded true lb %d true extent %d, MPI reports %d and %d",
				lt.TrueLB(), lt.TrueExtent(), tlb, text)
		}
	}
	lb, ext, err := t.Extent()
	if err != nil {
		return nil, err
	}
	if lt.LB() == lb && lt.Extent() == ext {
		return lt, nil
	}
	if lt, err = layout.Resized(lt, lb, ext); err != nil {
		return nil, fmt.Errorf("applying MPI's lb %d extent %d: %w", lb, ext, err)
	}
	return lt, nil
}
