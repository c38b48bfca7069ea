//go:build cgo

package e2e

// Files written through collio must be byte for byte the files the host
// MPI-IO (Open MPI's OMPIO or ROMIO) writes for the same program. Run the
// tests with
//
//	MPI_NP=4 go test -count=1 -p 1 -exec $PWD/scripts/mpiexec.sh ./e2e
//
// (and MPI_NP=3); plain `go test ./e2e` runs them as a 1-rank singleton.
//
// The reference is Open MPI's default io component, OMPIO, which leaves
// the bytes nobody wrote as holes (zeros). With OMPI_MCA_io=romio321 the
// comparison fails: ROMIO 3.2.1's read-modify-write (data sieving and
// two-phase) stores undefined bytes (0xff here) in the holes of a freshly
// created file, which MPI permits but which no byte comparison can match.

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpi"
	"github.com/collio/collio/internal/mpirunner"
)

// ---------------------------------------------------------------------------
// View shapes: each rank's view and what it writes, built as MPI datatypes.

// memVector is a noncontiguous memory layout: n instances of
// MPI_Type_vector(count, blocklen, stride, elem).
type memVector struct {
	elem                    mpi.Datatype
	esize                   int
	count, blocklen, stride int
	n                       int
	dt                      mpi.Datatype // built by prepare
}

func (m *memVector) extent() int { return ((m.count-1)*m.stride + m.blocklen) * m.esize }
func (m *memVector) size() int   { return m.count * m.blocklen * m.esize }

// isData reports whether byte i of the buffer is part of the data (not a
// hole), computed from the vector's parameters, independently of collio.
func (m *memVector) isData(i int) bool {
	in := i % m.extent() / m.esize // element within the instance
	return in%m.stride < m.blocklen
}

// shape is one rank's part of a view test.
type shape struct {
	disp     int64
	etype    mpi.Datatype // predefined
	esize    int
	filetype mpi.Datatype // committed derived type, freed by the test
	off      int64        // offset of the write, in etypes
	nbytes   int          // data bytes this rank writes
	mem      *memVector   // nil: contiguous memory
}

// units counts the pieces that a write can be split at: etypes for
// contiguous memory, instances of the memory type otherwise.
func (sh *shape) units() int {
	if sh.mem == nil {
		return sh.nbytes / sh.esize
	}
	return sh.mem.n
}

type shapeCase struct {
	name  string
	build func(p, r int) (*shape, error)
}

// resized is MPI_Type_create_resized that frees the inner type.
func resized(inner mpi.Datatype, err error, lb, extent int64) (mpi.Datatype, error) {
	if err != nil {
		return inner, err
	}
	t, err := mpi.TypeResized(inner, lb, extent)
	if ferr := inner.Free(); err == nil {
		err = ferr
	}
	return t, err
}

// split returns [lo, hi) of the r-th of p near-equal parts of n.
func split(n, p, r int) (int, int) { return r * n / p, (r + 1) * n / p }

// grid2 factors p into a 2-D process grid, the larger side first.
func grid2(p int) (int, int) {
	a := 1
	for d := 1; d*d <= p; d++ {
		if p%d == 0 {
			a = d
		}
	}
	return p / a, a
}

// subarrayC: a 7x5x6 array of doubles in C order, split along dimension 0
// (7 rows do not divide evenly by 3 or 4 ranks); each rank writes a 4x5
// part of its rows, leaving holes.
func subarrayC(p, r int) (*shape, error) {
	lo, hi := split(7, p, r)
	n0 := hi - lo
	sub, start := []int{n0, 4, 5}, []int{lo, 1, 1}
	if n0 == 0 { // more ranks than rows: this rank writes nothing
		sub, start = []int{1, 4, 5}, []int{0, 1, 1}
	}
	ft, err := mpi.TypeSubarray([]int{7, 5, 6}, sub, start, mpi.OrderC, mpi.TypeDouble())
	return &shape{etype: mpi.TypeDouble(), esize: 8, filetype: ft, nbytes: n0 * 4 * 5 * 8}, err
}

// subarrayCMem is subarrayC written from memory where every other double
// is a hole (vector of 5 doubles, stride 2).
func subarrayCMem(p, r int) (*shape, error) {
	sh, err := subarrayC(p, r)
	if err == nil {
		sh.mem = &memVector{elem: mpi.TypeDouble(), esize: 8, count: 5, blocklen: 1, stride: 2, n: sh.nbytes / 40}
	}
	return sh, err
}

// subarrayFortran: a 6x7x5 array of doubles in Fortran order (dimension 0
// fastest), split along dimension 1 (7 planes).
func subarrayFortran(p, r int) (*shape, error) {
	lo, hi := split(7, p, r)
	n1 := hi - lo
	sub, start := []int{4, n1, 5}, []int{2, lo, 0}
	if n1 == 0 {
		sub, start = []int{4, 1, 5}, []int{2, 0, 0}
	}
	ft, err := mpi.TypeSubarray([]int{6, 7, 5}, sub, start, mpi.OrderFortran, mpi.TypeDouble())
	return &shape{etype: mpi.TypeDouble(), esize: 8, filetype: ft, nbytes: 4 * n1 * 5 * 8}, err
}

// vectorStrided: 5 blocks of 3 ints with a stride of 3p+1 ints, each rank
// displaced by its block; a rank writes 13 ints from offset 2 (ending with
// a partial block).
func vectorStrided(p, r int) (*shape, error) {
	ft, err := mpi.TypeVector(5, 3, 3*p+1, mpi.TypeInt())
	return &shape{disp: int64(r * 12), etype: mpi.TypeInt(), esize: 4, filetype: ft, off: 2, nbytes: 13 * 4}, err
}

// irregular lays out 4 groups; in each, every rank has a block of 1 to 5
// ints after a gap of 0 to 2 ints, lengths and gaps varying with the group
// and the rank. It returns rank r's blocks.
func irregular(p, r int) (bls, displs []int) {
	pos := 0
	for i := range 4 {
		for q := range p {
			pos += (i + q) % 3
			bl := 1 + (3*i+2*q)%5
			if q == r {
				bls = append(bls, bl)
				displs = append(displs, pos)
			}
			pos += bl
		}
	}
	return bls, displs
}

// indexedIrregular: MPI_Type_indexed with rank r's irregular blocks; the
// write starts one int into the view.
func indexedIrregular(p, r int) (*shape, error) {
	bls, displs := irregular(p, r)
	n := 0
	for _, b := range bls {
		n += b
	}
	ft, err := mpi.TypeIndexed(bls, displs, mpi.TypeInt())
	return &shape{etype: mpi.TypeInt(), esize: 4, filetype: ft, off: 1, nbytes: (n - 1) * 4}, err
}

// structType is {2 ints at 0, 1 double at 12, 3 shorts at 20}: 22 data
// bytes in 26, with a hole at 8..12, resized to 28p bytes so that the
// ranks' tiles (displaced by 28r) interleave.
func structType(p int) (mpi.Datatype, error) {
	st, err := mpi.TypeStruct([]int{2, 1, 3}, []int64{0, 12, 20},
		[]mpi.Datatype{mpi.TypeInt(), mpi.TypeDouble(), mpi.TypeShort()})
	return resized(st, err, 0, int64(28*p))
}

// structInterleaved writes 97 bytes from byte 3 of the view: partial tiles
// at both ends.
func structInterleaved(p, r int) (*shape, error) {
	ft, err := structType(p)
	return &shape{disp: int64(28 * r), etype: mpi.Byte(), esize: 1, filetype: ft, off: 3, nbytes: 97}, err
}

// structMem writes 6 tiles (132 bytes, etype short) from memory laid out
// as 22 instances of a vector of 3 shorts with stride 2.
func structMem(p, r int) (*shape, error) {
	ft, err := structType(p)
	return &shape{disp: int64(28 * r), etype: mpi.TypeShort(), esize: 2, filetype: ft, nbytes: 132,
		mem: &memVector{elem: mpi.TypeShort(), esize: 2, count: 3, blocklen: 1, stride: 2, n: 22}}, err
}

// darrayC: an 11x10 array of doubles, block-cyclic in both dimensions
// (CYCLIC(2) x CYCLIC(3)) on a 2-D process grid, C order.
func darrayC(p, r int) (*shape, error) {
	g0, g1 := grid2(p)
	ft, err := mpi.TypeDarray(p, r, []int{11, 10}, []mpi.Distrib{mpi.DistribCyclic, mpi.DistribCyclic},
		[]int{2, 3}, []int{g0, g1}, mpi.OrderC, mpi.TypeDouble())
	if err != nil {
		return nil, err
	}
	n, err := ft.Size()
	return &shape{etype: mpi.TypeDouble(), esize: 8, filetype: ft, nbytes: int(n)}, err
}

// darrayFortran: a 9x8x3 array of ints, BLOCK x CYCLIC(2) x NONE, Fortran
// order.
func darrayFortran(p, r int) (*shape, error) {
	g0, g1 := grid2(p)
	ft, err := mpi.TypeDarray(p, r, []int{9, 8, 3},
		[]mpi.Distrib{mpi.DistribBlock, mpi.DistribCyclic, mpi.DistribNone},
		[]int{mpi.DargDefault, 2, mpi.DargDefault}, []int{g0, g1, 1}, mpi.OrderFortran, mpi.TypeInt())
	if err != nil {
		return nil, err
	}
	n, err := ft.Size()
	return &shape{etype: mpi.TypeInt(), esize: 4, filetype: ft, nbytes: int(n)}, err
}

// dispEtype8: displacement 100 (not a multiple of the etype), etype
// double, 3 doubles per rank per tile (indexed block resized to 24p
// bytes); 17 doubles written from offset 5 etypes.
func dispEtype8(p, r int) (*shape, error) {
	ib, err := mpi.TypeIndexedBlock(3, []int{3 * r}, mpi.TypeDouble())
	ft, err := resized(ib, err, 0, int64(24*p))
	return &shape{disp: 100, etype: mpi.TypeDouble(), esize: 8, filetype: ft, off: 5, nbytes: 17 * 8}, err
}

// emptyRank: hindexed blocks of 2 and 3 ints per rank in 40-byte slots;
// the last rank contributes nothing, the others 3 tiles.
func emptyRank(p, r int) (*shape, error) {
	hi, err := mpi.TypeHindexed([]int{2, 3}, []int64{int64(40 * r), int64(40*r + 12)}, mpi.TypeInt())
	ft, err := resized(hi, err, 0, int64(40*p))
	n := 3 * 20
	if r == p-1 {
		n = 0
	}
	return &shape{etype: mpi.TypeInt(), esize: 4, filetype: ft, nbytes: n}, err
}

var shapeCases = []shapeCase{
	{"subarray-C", subarrayC},
	{"subarray-runs", subarrayRuns},
	{"subarray-C-memvector", subarrayCMem},
	{"subarray-Fortran", subarrayFortran},
	{"vector", vectorStrided},
	{"indexed", indexedIrregular},
	{"struct-resized", structInterleaved},
	{"struct-memvector", structMem},
	{"darray-C-cyclic", darrayC},
	{"darray-Fortran-block-cyclic", darrayFortran},
	{"disp100-etype8", dispEtype8},
	{"empty-rank", emptyRank},
	{"block-cyclic-1d", blockCyclic1D},
	{"records8", records8},
	{"holes-every-rank", holesEveryRank},
	{"some-ranks-empty", someRanksEmpty},
	{"nothing", nothing},
}

// ---------------------------------------------------------------------------
// The equality test.

// writeVariant is one way collio writes the shape's data.
type writeVariant struct {
	name       string
	mode       collio.Mode
	hints      collio.Hints
	collective bool
	atomic     bool
	twoWrites  bool // split the data in two writes (collective ones: see writeTwoCollective)

	// Checked through Stats() after a collective write (and after the
	// read back, when readBack is set).
	strategy string // the strategy that must have run ("": either)
	aggs     int    // aggregators the hints must give (0: not checked)
	cbBuf    int64  // cb_buffer_size (0: the default), for the bound on rounds
	noRMW    bool   // no aggregator may read-modify-write
	wantRMW  bool   // some aggregator must read-modify-write
	readBack bool   // read the file back with ReadAtAll under the same hints
	// overwrite: the file exists beforehand, filled with background
	// data (see seedBackground) that the bytes nobody writes
	// must keep.
	overwrite bool
	// servers: written through I/O servers, where the E10 cache (if any)
	// runs, so the compute ranks have no cache statistics.
	servers bool
}

var writeVariants = []writeVariant{
	{name: "indep", mode: collio.ModeCreate | collio.ModeWrOnly},
	{name: "coll", mode: collio.ModeCreate | collio.ModeRdWr, collective: true},
	{name: "nosieve-2w", mode: collio.ModeCreate | collio.ModeWrOnly, twoWrites: true,
		hints: collio.Hints{"romio_ds_write": "disable"}},
	{name: "sieve-2w", mode: collio.ModeCreate | collio.ModeRdWr, twoWrites: true,
		hints: collio.Hints{"romio_ds_write": "enable", "ind_wr_buffer_size": "64"}},
	{name: "atomic", mode: collio.ModeCreate | collio.ModeRdWr, atomic: true},
}

// readVariant reads one of the written files back through collio.
type readVariant struct {
	file       string // which variant's file ("host" for the host MPI-IO's)
	hints      collio.Hints
	collective bool
	atomic     bool
	strategy   string // for collective reads: the strategy that must run ("": either)
}

var readVariants = []readVariant{
	{file: "indep"},
	{file: "host", collective: true, hints: collio.Hints{"romio_ds_read": "disable"}},
	{file: "coll", hints: collio.Hints{"romio_ds_read": "enable", "ind_rd_buffer_size": "64"}},
}

// TestHostEquality: for every view shape, the files collio writes
// (independently, collectively, with and without data sieving, in atomic
// mode) are byte-identical to the file the host MPI-IO's
// MPI_File_write_at_all writes, and reading them back through collio gives
// the data written. Collective writes also run through each strategy, and
// for most shapes through two-phase with each of its knobs varied
// (variantsFor, in host_equality_twophase_test.go); Stats() shows that the intended
// strategy ran, and each such file is read back with ReadAtAll under the
// same hints.
func TestHostEquality(t *testing.T) {
	for _, sc := range shapeCases {
		t.Run(sc.name, func(t *testing.T) {
			mpirunner.Run(t, func(t *testing.T, c comm.Comm) { runShape(t, c, sc) })
		})
	}
}

// equalityRun holds one shape's state on one rank.
type equalityRun struct {
	t     *testing.T
	c     comm.Comm
	sh    *shape
	sc    string // the shape's name
	etL   *collio.Type
	ftL   *collio.Type
	memL  *collio.Type
	buf   []byte // what is written (memory holes included)
	want  []byte // what a read into a fillByte-filled buffer must give
	paths map[string]string
	vars  []writeVariant // the variants run for this shape
	total int64          // data bytes all ranks write
	bg    []byte         // on rank 0: the content of overwrite variants' files before the write
}

func runShape(t *testing.T, c comm.Comm, sc shapeCase) {
	runShapeWith(t, c, sc, variantsFor(sc.name, c.Size()), readVariants)
}

// runShapeWith writes the shape as the host MPI-IO does and through each
// of vars, compares the files, and reads them back through reads and the
// variants' own read backs.
func runShapeWith(t *testing.T, c comm.Comm, sc shapeCase, vars []writeVariant, reads []readVariant) {
	p, r := c.Size(), c.Rank()
	sh, err := sc.build(p, r)
	if sh != nil && !sh.filetype.IsNull() {
		t.Cleanup(func() { sh.filetype.Free() })
	}
	together(t, c, err, "building the filetype")
	if sh.mem != nil {
		m := sh.mem
		m.dt, err = mpi.TypeVector(m.count, m.blocklen, m.stride, m.elem)
		if err == nil {
			t.Cleanup(func() { m.dt.Free() })
		}
		together(t, c, err, "building the memory type")
	}
	e := &equalityRun{t: t, c: c, sh: sh, sc: sc.name, paths: map[string]string{}}
	e.decode()
	e.makeData()
	e.total = sumInt64(t, c, int64(sh.nbytes))
	e.vars = vars

	dir := mpirunner.TempDir(t, c)
	e.paths["host"] = filepath.Join(dir, sc.name+".host")
	e.writeHost()
	for _, v := range e.vars {
		e.paths[v.name] = filepath.Join(dir, sc.name+"."+v.name)
		if v.overwrite {
			e.seedBackground(v)
		}
		e.writeCollio(v)
	}
	e.compareFiles()
	for _, rv := range reads {
		e.readBack(rv)
	}
	for _, v := range e.vars {
		if v.readBack {
			e.readBack(readVariant{file: v.name, hints: v.hints, collective: true, atomic: v.atomic, strategy: v.strategy})
		}
	}
}

// decode turns the MPI types into collio's and checks that the decoded
// filetype has MPI's size and bounds.
func (e *equalityRun) decode() {
	t, c, sh := e.t, e.c, e.sh
	var err error
	e.etL, err = sh.etype.Layout()
	together(t, c, err, "decoding the etype")
	e.ftL, err = sh.filetype.Layout()
	together(t, c, err, "decoding the filetype")
	size, err := sh.filetype.Size()
	together(t, c, err, "MPI_Type_size")
	lb, ext, err := sh.filetype.Extent()
	together(t, c, err, "MPI_Type_get_extent")
	assert.Equal(t, []int64{size, lb, ext}, []int64{e.ftL.Size(), e.ftL.LB(), e.ftL.Extent()},
		"decoded filetype %v: size, lb, extent differ from MPI's", e.ftL)
	assert.Equal(t, int64(sh.esize), e.etL.Size(), "decoded etype size")
	if sh.mem != nil {
		e.memL, err = sh.mem.dt.Layout()
		together(t, c, err, "decoding the memory type")
		assert.Equal(t, []int64{int64(sh.mem.size()), int64(sh.mem.extent())}, []int64{e.memL.Size(), e.memL.Extent()},
			"decoded memory type: size, extent")
		if sh.mem.n*sh.mem.size() != sh.nbytes {
			t.Errorf("test bug: %d memory instances of %d bytes for %d bytes", sh.mem.n, sh.mem.size(), sh.nbytes)
		}
	}
	if sh.nbytes%sh.esize != 0 {
		t.Errorf("test bug: %d bytes is not a whole number of %d-byte etypes", sh.nbytes, sh.esize)
	}
	checkpoint(t, c)
}

// makeData builds the write buffer and the expected read buffer.
func (e *equalityRun) makeData() {
	sh, r := e.sh, e.c.Rank()
	if sh.mem == nil {
		e.buf = pattern(sh.nbytes, r, 0)
		e.want = e.buf
		return
	}
	e.buf = pattern(sh.mem.n*sh.mem.extent(), r, 0)
	e.want = bytes.Repeat([]byte{fillByte}, len(e.buf))
	for i := range e.buf {
		if sh.mem.isData(i) {
			e.want[i] = e.buf[i]
		}
	}
}

// write writes units [lo, hi) of the data (see shape.units).
func (e *equalityRun) write(f *collio.File, lo, hi int, collective bool) (int64, error) {
	sh := e.sh
	if sh.mem == nil {
		p := e.buf[lo*sh.esize : hi*sh.esize]
		off := sh.off + int64(lo)
		var n int
		var err error
		if collective {
			n, err = f.WriteAtAll(p, off)
		} else {
			n, err = f.WriteAt(p, off)
		}
		return int64(n), err
	}
	m := sh.mem
	b := collio.Typed(e.buf[lo*m.extent():], hi-lo, e.memL)
	off := sh.off + int64(lo*m.size()/sh.esize)
	if collective {
		return f.WriteAtAllBuffer(b, off)
	}
	return f.WriteAtBuffer(b, off)
}

func (e *equalityRun) writeCollio(v writeVariant) {
	t, c, sh := e.t, e.c, e.sh
	hints, cacheDir := v.hints, ""
	if v.hints["e10_cache"] != "" {
		cacheDir = e.paths[v.name] + ".cache"
		hints = maps.Clone(v.hints)
		hints["e10_cache_path"] = cacheDir
	}
	f, err := collio.Open(c, e.paths[v.name], v.mode, hints)
	together(t, c, err, "%s: open", v.name)
	err = f.SetView(sh.disp, e.etL, e.ftL, nil)
	if err == nil && v.atomic {
		err = f.SetAtomicity(true)
		if err == nil && !f.Atomicity() {
			err = errors.New("Atomicity() is false after SetAtomicity(true)")
		}
	}
	if err != nil {
		f.Close()
	}
	together(t, c, err, "%s: set_view/set_atomicity", v.name)
	var n int64
	if v.twoWrites && v.collective {
		n, err = e.writeTwoCollective(f)
	} else if v.twoWrites {
		half := sh.units() / 2
		n1, err1 := e.write(f, 0, half, false)
		n2, err2 := e.write(f, half, sh.units(), false)
		n, err = n1+n2, errors.Join(err1, err2)
	} else {
		n, err = e.write(f, 0, sh.units(), v.collective)
	}
	if err == nil && n != int64(sh.nbytes) {
		err = fmt.Errorf("wrote %d bytes, want %d", n, sh.nbytes)
	}
	last, _ := f.Stats()
	if err == nil && v.collective {
		err = e.checkWriteStats(f, last, v)
	}
	cs, cached := f.CacheStats()
	if err == nil && cacheDir != "" && !cached && !v.servers {
		err = fmt.Errorf("rank %d has no E10 cache (warnings at open: %q)", c.Rank(), f.Warnings())
	}
	cerr := f.Close()
	together(t, c, errors.Join(err, cerr), "%s: write", v.name)
	if v.collective {
		e.checkRMW(last, v)
	}
	if cacheDir != "" && !v.servers {
		e.checkCacheUsed(v.name, cacheDir, cs)
	}
}

// checkCacheUsed checks that the E10 cache took every byte the ranks
// wrote (more with read-modify-write) and copied it, and that nothing is
// left in the cache directory after close (discard on success).
func (e *equalityRun) checkCacheUsed(name, dir string, s collio.CacheStats) {
	t, c := e.t, e.c
	if v, ok := e.variant(name); ok && v.hints["e10_cache_deferred_close"] == "enable" {
		together(t, c, collio.WaitClosed(e.paths[name]), "%s: waiting for the deferred close", name)
	}
	cached := sumInt64(t, c, s.CachedBytes)
	if cached < e.total {
		t.Errorf("%s: the caches took %d bytes, the ranks wrote %d", name, cached, e.total)
	}
	if c.Rank() == 0 {
		if es, err := os.ReadDir(dir); err == nil && len(es) > 0 {
			t.Errorf("%s: %d files left in the cache directory after close", name, len(es))
		}
	}
	checkpoint(t, c)
}

func (e *equalityRun) variant(name string) (writeVariant, bool) {
	for _, v := range e.vars {
		if v.name == name {
			return v, true
		}
	}
	return writeVariant{}, false
}

func (e *equalityRun) writeHost() {
	t, c, sh := e.t, e.c, e.sh
	mc, _ := comm.As[mpi.Comm](c) // under any wrapper (I/O servers' compute communicator)
	hf, err := mpi.HostOpen(mc, e.paths["host"], mpi.ModeCreate|mpi.ModeWrOnly, nil)
	together(t, c, err, "host open")
	err = hf.SetView(sh.disp, sh.etype, sh.filetype, "native", nil)
	if err != nil {
		hf.Close()
	}
	together(t, c, err, "host set_view")
	var n int
	if sh.mem == nil {
		n, err = hf.WriteAtAll(sh.off, e.buf, sh.nbytes/sh.esize, sh.etype)
	} else {
		n, err = hf.WriteAtAll(sh.off, e.buf, sh.mem.n, sh.mem.dt)
	}
	if err == nil && n != sh.nbytes {
		err = fmt.Errorf("host wrote %d bytes, want %d", n, sh.nbytes)
	}
	cerr := hf.Close()
	together(t, c, errors.Join(err, cerr), "host write_at_all")
}

// compareFiles compares every collio file with the host's on rank 0. The
// host's file is also checked on its own: its nonzero bytes (the data;
// holes are zero) must number what all ranks wrote, which also shows that
// the ranks' views do not overlap.
func (e *equalityRun) compareFiles() {
	t, c := e.t, e.c
	total := sumInt64(t, c, int64(e.sh.nbytes))
	if c.Rank() == 0 {
		ref, err := os.ReadFile(e.paths["host"])
		if err != nil {
			t.Errorf("reading the host's file: %v", err)
		}
		if nz := int64(len(ref) - bytes.Count(ref, []byte{0})); err == nil && nz != total {
			t.Errorf("the host's file has %d data bytes, the ranks wrote %d", nz, total)
		}
		for _, v := range e.vars {
			got, err := os.ReadFile(e.paths[v.name])
			want, what := ref, "the host MPI-IO's"
			if v.overwrite {
				want, what = overlay(e.bg, ref), "the host MPI-IO's laid over the background"
			}
			switch {
			case err != nil:
				t.Errorf("%s: %v", v.name, err)
			case !bytes.Equal(got, want):
				t.Errorf("%s: file differs from %s: %s", v.name, what, firstDiff(got, want))
			}
		}
	}
	checkpoint(t, c)
}

func (e *equalityRun) readBack(rv readVariant) {
	t, c, sh := e.t, e.c, e.sh
	name := "read " + rv.file
	f, err := collio.Open(c, e.paths[rv.file], collio.ModeRdOnly, rv.hints)
	together(t, c, err, "%s: open", name)
	err = f.SetView(sh.disp, e.etL, e.ftL, nil)
	if err == nil && rv.atomic {
		err = f.SetAtomicity(true)
	}
	if err != nil {
		f.Close()
	}
	together(t, c, err, "%s: set_view", name)
	got := bytes.Repeat([]byte{fillByte}, len(e.want))
	var n int64
	switch {
	case sh.mem == nil && rv.collective:
		var k int
		k, err = f.ReadAtAll(got, sh.off)
		n = int64(k)
	case sh.mem == nil:
		var k int
		k, err = f.ReadAt(got, sh.off)
		n = int64(k)
	case rv.collective:
		n, err = f.ReadAtAllBuffer(collio.Typed(got, sh.mem.n, e.memL), sh.off)
	default:
		n, err = f.ReadAtBuffer(collio.Typed(got, sh.mem.n, e.memL), sh.off)
	}
	if err == nil && rv.collective {
		last, _ := f.Stats()
		err = checkStrategy(last, rv.strategy)
	}
	cerr := f.Close()
	together(t, c, errors.Join(err, cerr), "%s", name)
	assert.Equal(t, int64(sh.nbytes), n, "%s: bytes read", name)
	if !bytes.Equal(got, e.want) {
		t.Errorf("%s: data read back differs from the data written: %s", name, firstDiff(got, e.want))
	}
	checkpoint(t, c)
}
