package layout

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/collio/collio/internal/ioerr"
)

// FuzzConstructors builds nested types from arbitrary constructor
// arguments, the shapes internal/mpi decodes from MPI combiner trees:
// negative, huge and mismatched counts, nil children, bad orders and
// distributions, and Resized bounds (MPI_LB/MPI_UB-like sticky markers)
// at any level. No argument may panic or hang; a rejected type gets an
// ErrArg or ErrType error; a type whose arguments are all small must be
// accepted exactly when MPI's rules allow it, and then agree with the
// brute-force expansion of ref_test.go in size, bounds and blocks.
func FuzzConstructors(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzArgs{b: data}
		s := r.spec(3)
		typ, err := fuzzBuild(s)
		if err != nil {
			if c := ioerr.ClassOf(err); c != ioerr.ErrArg && c != ioerr.ErrType {
				t.Fatalf("%s: error of class %v, want invalid argument or datatype: %v", describeSpec(s), c, err)
			}
			var e *ioerr.Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("%s: error without a message: %#v", describeSpec(s), err)
			}
		} else {
			exercise(typ)
		}
		if specMagnitude(s) > 1<<40 || specEntries(s) > specBlocks {
			return // the reference's plain int64 arithmetic or its size would not cope
		}
		if err := refValid(s); err != nil {
			if typ != nil {
				t.Fatalf("%s: accepted, but %v", describeSpec(s), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: valid arguments rejected: %v", describeSpec(s), err)
		}
		compareWithReference(t, describeSpec(s), typ, expand(s))
	})
}

// exercise calls every accessor of a type of any size; none may panic, and
// walking the first blocks must not hang.
func exercise(typ *Type) {
	_, _, _, _ = typ.Size(), typ.Extent(), typ.TrueLB(), typ.TrueExtent()
	_, _, _ = typ.NumBlocks(), typ.IsContiguous(), typ.TilesOverlap()
	_ = typ.CheckFiletype()
	_ = typ.String()
	k := 0
	for range typ.Blocks() {
		if k++; k == 64 {
			break
		}
	}
}

func compareWithReference(t *testing.T, what string, typ *Type, r refT) {
	t.Helper()
	fail := func(field string, got, want any) {
		t.Helper()
		t.Fatalf("%s (%s): %s = %v, reference %v", what, typ, field, got, want)
	}
	want := r.merged()
	got := collect(typ)
	if len(got) != len(want) {
		fail("blocks", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			fail("blocks", got, want)
		}
	}
	lb, ub := r.bounds()
	if typ.Size() != r.size() {
		fail("size", typ.Size(), r.size())
	}
	if typ.LB() != lb || typ.UB() != ub || typ.Extent() != ub-lb {
		fail("lb/ub/extent", [3]int64{typ.LB(), typ.UB(), typ.Extent()}, [3]int64{lb, ub, ub - lb})
	}
	if typ.NumBlocks() != int64(len(want)) {
		fail("NumBlocks", typ.NumBlocks(), len(want))
	}
	if len(r.ents) > 0 {
		tlb, tub := r.ents[0].off, r.ents[0].off+r.ents[0].n
		for _, e := range r.ents {
			tlb, tub = min(tlb, e.off), max(tub, e.off+e.n)
		}
		if typ.TrueLB() != tlb || typ.TrueExtent() != tub-tlb {
			fail("true lb/extent", [2]int64{typ.TrueLB(), typ.TrueExtent()}, [2]int64{tlb, tub - tlb})
		}
	}
	if err := typ.CheckFiletype(); (err == nil) != refFiletypeOK(r) {
		fail("CheckFiletype", err, refFiletypeOK(r))
	} else if err != nil && !strings.Contains(err.Error(), refDisorder(want)) {
		fail("CheckFiletype", err, refDisorder(want))
	}
	if r.size() > 0 && typ.TilesOverlap() != refTilesOverlap(r) {
		fail("TilesOverlap", typ.TilesOverlap(), refTilesOverlap(r))
	}
}

// refDisorder is the start of CheckFiletype's message for the first
// offending block of a typemap that is not a valid filetype.
func refDisorder(blocks []ent) string {
	var prevEnd int64
	for _, b := range blocks {
		if b.off < 0 {
			return fmt.Sprintf("block at offset %d has a negative displacement", b.off)
		}
		if b.off < prevEnd {
			return fmt.Sprintf("block at offset %d overlaps or precedes the previous block ending at %d", b.off, prevEnd)
		}
		prevEnd = b.off + b.n
	}
	return "(valid filetype)"
}

// fuzzArgs draws constructor arguments from the fuzzer's bytes; past the
// end every draw is 0.
type fuzzArgs struct{ b []byte }

func (r *fuzzArgs) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// extremes are the values that break arithmetic.
var extremes = []int64{0, -1, 1, math.MaxInt32, math.MinInt32, 1 << 31, 1 << 32, 1 << 60, -(1 << 60),
	1 << 62, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1<<63 - 1<<32}

// num is mostly a small number in [-4, 12], sometimes an extreme value or
// eight raw bytes.
func (r *fuzzArgs) num() int64 {
	c := r.byte()
	switch {
	case c < 224:
		return int64(c%17) - 4
	case c < 224+byte(len(extremes)):
		return extremes[c-224]
	}
	var v uint64
	for range 8 {
		v = v<<8 | uint64(r.byte())
	}
	return int64(v)
}

func (r *fuzzArgs) int() int { return int(r.num()) }

// length is a slice length: mostly 0-7, sometimes past directMin so that
// the compact list form is reached.
func (r *fuzzArgs) length() int {
	c := r.byte()
	if c >= 248 {
		return directMin + int(c-248)*3
	}
	return int(c % 8)
}

func (r *fuzzArgs) ints(n int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = r.int()
	}
	return v
}

func (r *fuzzArgs) int64s(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = r.num()
	}
	return v
}

// other is n, or rarely a mismatched length.
func (r *fuzzArgs) other(n int) int {
	if c := r.byte(); c >= 240 {
		return max(0, n+int(c%3)-1)
	}
	return n
}

// fuzzKinds are ref_test.go's kinds plus "nil", a missing type.
var fuzzKinds = append(append([]string(nil), kinds...), "nil")

func (r *fuzzArgs) spec(depth int) *spec {
	kind := "bytes"
	if depth > 0 {
		kind = fuzzKinds[int(r.byte())%len(fuzzKinds)]
	} else if r.byte() == 255 {
		kind = "nil"
	}
	s := &spec{kind: kind}
	kid := func() *spec { return r.spec(depth - 1) }
	switch kind {
	case "bytes":
		s.n = r.num()
	case "contiguous":
		s.count, s.kids = r.int(), []*spec{kid()}
	case "vector", "hvector":
		s.count, s.blocklen, s.stride = r.int(), r.int(), r.num()
		s.kids = []*spec{kid()}
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		n := r.length()
		s.blocklen = r.int()
		s.blocklens = r.ints(n)
		s.displs = r.int64s(r.other(n))
		nk := 1
		if kind == "struct" {
			nk = r.other(n)
		}
		for range nk {
			s.kids = append(s.kids, kid())
		}
		if kind == "indexedblock" || kind == "hindexedblock" {
			s.blocklens = repeatLen(s.blocklen, len(s.displs))
		}
	case "resized":
		s.lb, s.ext = r.num(), r.num()
		s.kids = []*spec{kid()}
	case "subarray":
		n := r.length() % 4
		s.sizes, s.subsizes, s.starts = r.ints(n), r.ints(r.other(n)), r.ints(r.other(n))
		s.order = Order(r.num())
		s.kids = []*spec{kid()}
	case "darray":
		n := r.length() % 4
		s.size, s.rank = r.int(), r.int()
		s.sizes, s.dargs, s.psizes = r.ints(n), r.ints(r.other(n)), r.ints(r.other(n))
		for range r.other(n) {
			s.distribs = append(s.distribs, Distrib(r.num()))
		}
		s.order = Order(r.num())
		s.kids = []*spec{kid()}
	}
	return s
}

// fuzzBuild is build (ref_test.go) with "nil" children and without its
// assumptions on the spec's shape.
func fuzzBuild(s *spec) (*Type, error) {
	kids := make([]*Type, len(s.kids))
	for i, k := range s.kids {
		t, err := fuzzBuild(k)
		if err != nil {
			return nil, err
		}
		kids[i] = t
	}
	var kid *Type
	if len(kids) > 0 {
		kid = kids[0]
	}
	ints := func(v []int64) []int {
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out
	}
	switch s.kind {
	case "nil":
		return nil, nil
	case "bytes":
		return Bytes(s.n), nil
	case "contiguous":
		return Contiguous(s.count, kid)
	case "vector":
		return Vector(s.count, s.blocklen, int(s.stride), kid)
	case "hvector":
		return HVector(s.count, s.blocklen, s.stride, kid)
	case "indexed":
		return Indexed(s.blocklens, ints(s.displs), kid)
	case "hindexed":
		return HIndexed(s.blocklens, s.displs, kid)
	case "indexedblock":
		return IndexedBlock(s.blocklen, ints(s.displs), kid)
	case "hindexedblock":
		return HIndexedBlock(s.blocklen, s.displs, kid)
	case "struct":
		return Struct(s.blocklens, s.displs, kids)
	case "resized":
		return Resized(kid, s.lb, s.ext)
	case "subarray":
		return Subarray(s.sizes, s.subsizes, s.starts, s.order, kid)
	case "darray":
		return Darray(s.size, s.rank, s.sizes, s.distribs, s.dargs, s.psizes, s.order, kid)
	}
	panic("unknown kind " + s.kind)
}

// refValid applies MPI's argument rules (as layout states them) to a spec
// whose numbers are small enough not to overflow.
func refValid(s *spec) error {
	if s.kind == "nil" {
		return errors.New("a type is nil")
	}
	for _, k := range s.kids {
		if err := refValid(k); err != nil {
			return err
		}
	}
	neg := func(name string, v int) error {
		if v < 0 {
			return errors.New(name + " is negative")
		}
		return nil
	}
	switch s.kind {
	case "contiguous":
		return neg("count", s.count)
	case "vector", "hvector":
		return errors.Join(neg("count", s.count), neg("blocklen", s.blocklen))
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		if len(s.blocklens) != len(s.displs) || (s.kind == "struct" && len(s.kids) != len(s.blocklens)) {
			return errors.New("slice lengths differ")
		}
		for _, v := range s.blocklens {
			if err := neg("a block length", v); err != nil {
				return err
			}
		}
	case "resized":
		if s.ext < 0 {
			return errors.New("extent is negative")
		}
	case "subarray":
		if s.order != OrderC && s.order != OrderFortran {
			return errors.New("bad order")
		}
		n := len(s.sizes)
		if n == 0 || len(s.subsizes) != n || len(s.starts) != n {
			return errors.New("no dimensions, or slice lengths differ")
		}
		for i := range n {
			if s.sizes[i] <= 0 || s.subsizes[i] < 0 || s.starts[i] < 0 || s.starts[i]+s.subsizes[i] > s.sizes[i] {
				return errors.New("bad dimension")
			}
		}
	case "darray":
		if s.order != OrderC && s.order != OrderFortran {
			return errors.New("bad order")
		}
		n := len(s.sizes)
		if s.size <= 0 || s.rank < 0 || s.rank >= s.size {
			return errors.New("bad size or rank")
		}
		if n == 0 || len(s.distribs) != n || len(s.dargs) != n || len(s.psizes) != n {
			return errors.New("no dimensions, or slice lengths differ")
		}
		procs := 1
		for i := range n {
			g, p, d, darg := s.sizes[i], s.psizes[i], s.distribs[i], s.dargs[i]
			switch {
			case g <= 0 || p <= 0 || (darg != DargDefault && darg <= 0):
				return errors.New("bad dimension")
			case d == DistribNone && p != 1:
				return errors.New("DistribNone over several processes")
			case d == DistribBlock && darg != DargDefault && darg*p < g:
				return errors.New("blocks do not cover the dimension")
			case d != DistribNone && d != DistribBlock && d != DistribCyclic:
				return errors.New("bad distribution")
			}
			procs *= p
		}
		if procs != s.size {
			return errors.New("product of psizes is not size")
		}
	}
	return nil
}

// satAdd and satMul, on values in [0, satMax], saturate at satMax.
const satMax = int64(1) << 62

func satAbs(v int64) int64 {
	if v < -satMax || v > satMax {
		return satMax
	}
	if v < 0 {
		return -v
	}
	return v
}

func satAdd(a, b int64) int64 {
	if a > satMax-b {
		return satMax
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > satMax/a {
		return satMax
	}
	return a * b
}

// specMagnitude bounds the absolute value of every offset, bound and count
// that building or expanding s computes.
func specMagnitude(s *spec) int64 {
	args := satAdd(satAbs(s.n), satAdd(satAbs(int64(s.count)), satAdd(satAbs(int64(s.blocklen)), satAbs(s.stride))))
	args = satAdd(args, satAdd(satAbs(s.lb), satAdd(satAbs(s.ext), satAdd(satAbs(int64(s.size)), satAbs(int64(s.rank))))))
	sum := func(v []int) {
		for _, x := range v {
			args = satAdd(args, satAbs(int64(x)))
		}
	}
	sum(s.blocklens)
	sum(s.sizes)
	sum(s.subsizes)
	sum(s.starts)
	sum(s.dargs)
	sum(s.psizes)
	for _, x := range s.displs {
		args = satAdd(args, satAbs(x))
	}
	for _, d := range s.distribs {
		args = satAdd(args, satAbs(int64(d)))
	}
	kid := int64(1)
	for _, k := range s.kids {
		kid = satAdd(kid, specMagnitude(k))
	}
	// Every offset is a sum of products of at most all the arguments and
	// the children's offsets (arrays multiply their dimensions together).
	m := satMul(satAdd(args, 1), satMul(2, kid))
	for _, d := range s.sizes {
		m = satMul(m, satAdd(satAbs(int64(d)), 1))
	}
	return m
}

// specEntries bounds the work of expanding s (typemap entries, and the
// elements a subarray or darray reference visits).
func specEntries(s *spec) int64 {
	kid := int64(1)
	for _, k := range s.kids {
		kid = satAdd(kid, specEntries(k))
	}
	reps := int64(1)
	switch s.kind {
	case "contiguous":
		reps = satAbs(int64(s.count))
	case "vector", "hvector":
		reps = satMul(satAbs(int64(s.count)), satAdd(satAbs(int64(s.blocklen)), 1))
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		reps = int64(len(s.blocklens))
		for _, v := range s.blocklens {
			reps = satAdd(reps, satAbs(int64(v)))
		}
	case "subarray", "darray":
		for _, v := range s.sizes {
			reps = satMul(reps, satAbs(int64(v)))
		}
	}
	return satMul(satAdd(reps, 1), kid)
}

func describeSpec(s *spec) string {
	if s == nil {
		return "nil"
	}
	out := s.kind + "("
	switch s.kind {
	case "bytes":
		out += fmt.Sprint(s.n)
	case "contiguous":
		out += fmt.Sprint(s.count)
	case "vector", "hvector":
		out += fmt.Sprint(s.count, s.blocklen, s.stride)
	case "indexed", "hindexed", "indexedblock", "hindexedblock", "struct":
		out += fmt.Sprint(s.blocklens, s.displs)
	case "resized":
		out += fmt.Sprint(s.lb, s.ext)
	case "subarray":
		out += fmt.Sprint(s.sizes, s.subsizes, s.starts, " order ", s.order)
	case "darray":
		out += fmt.Sprint(s.size, s.rank, s.sizes, s.distribs, s.dargs, s.psizes, " order ", s.order)
	}
	for _, k := range s.kids {
		out += " " + describeSpec(k)
	}
	return out + ")"
}

// Counts near 2^60 build in constant space: the representation stores a
// repeat, never one record per element, and what cannot be represented is
// an error.
func TestHugeCountsNoAllocation(t *testing.T) {
	var typ *Type
	allocs := testing.AllocsPerRun(10, func() {
		var err error
		typ, err = Contiguous(1<<60, Byte)
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 10 || typ.Size() != 1<<60 || typ.NumBlocks() != 1 {
		t.Fatalf("Contiguous(2^60): %v allocations, size %d, %d blocks", allocs, typ.Size(), typ.NumBlocks())
	}
	v, err := Vector(1<<60, 1, 2, Byte)
	if err != nil || v.Size() != 1<<60 || v.NumBlocks() != 1<<60 {
		t.Fatalf("Vector(2^60, 1, 2): %v, %v", v, err)
	}
	for _, tc := range []func() (*Type, error){
		func() (*Type, error) { return Vector(1<<60, 1<<60, 1, Byte) },
		func() (*Type, error) { return Contiguous(1<<60, Int64) },
		func() (*Type, error) {
			return Subarray([]int{1 << 60, 1 << 60}, []int{1, 1}, []int{0, 0}, OrderC, Byte)
		},
		func() (*Type, error) {
			return Darray(1, 0, []int{1 << 62, 4}, []Distrib{DistribNone, DistribNone}, []int{DargDefault, DargDefault},
				[]int{1, 1}, OrderC, Byte)
		},
		func() (*Type, error) { return Resized(Byte, math.MaxInt64, 1) },
	} {
		if typ, err := tc(); err == nil || ioerr.ClassOf(err) != ioerr.ErrArg {
			t.Errorf("got %v, %v; want a too-large error", typ, err)
		}
	}
}

// A filetype whose first disorder lies after 2^40 blocks is refused at
// once, naming the block, instead of walking the blocks before it (found
// by FuzzConstructors: 2^31 blocks took 20 s).
func TestCheckFiletypeHugeDisorder(t *testing.T) {
	inner, err := Resized(Bytes(7), 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := Resized(inner, -4, 12)
	if err != nil {
		t.Fatal(err)
	}
	typ, err := HVector(4, 1<<40, 3, outer)
	if err != nil {
		t.Fatal(err)
	}
	err = typ.CheckFiletype()
	want := fmt.Sprintf("block at offset 3 overlaps or precedes the previous block ending at %d", (1<<40-1)*12+7)
	if err == nil || ioerr.ClassOf(err) != ioerr.ErrType || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckFiletype: %v, want %q", err, want)
	}
}
