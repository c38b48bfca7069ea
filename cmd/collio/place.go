package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/cmd/collio/internal/place"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/benchutil"
	"github.com/collio/collio/record"
)

const placeUsage = `usage: collio place -nodes N -cores-per-node C PATTERN [options]

place maps the ranks of a collective write onto nodes so that the data
sent to two-phase aggregators stays on its node (SetMatch), writes an Open
MPI rankfile, and reports the bytes crossing nodes under byslot, bynode and
SetMatch. PATTERN is one of:

  -grid PxQ[xR] -array XxY[xZ] | -block XxY[xZ]  [-elem BYTES] [-shuffle SEED]
        a Cartesian process grid over a global array in blocks (C order,
        ranks row-major); -block gives each rank's block instead of the
        array; -shuffle scrambles the ranks over the grid (a communicator
        that reorders them)
  -pattern coll_perf -ranks N [-size S]
        coll_perf: an S x S x S int32 array over MPI_Dims_create's grid
  -pattern e3sm|btio|s3d -ranks N
        E3SM-, BTIO- and S3D-like patterns at collio sim's default sizes
  -pattern ior-segmented -ranks N -block-size B
  -pattern ior-strided -ranks N -block-size B -segments K
  -record DIR [-file NAME] [-call N]
        a collective write recorded with COLLIO_RECORD=DIR (default: the
        first one; -file when DIR holds records of several files)

Options:
`

// placeFlags are the inputs of collio place.
type placeFlags struct {
	nodes, cores, ranks, segments, cbNodes int
	grid, array, block, pattern, hosts     string
	elem, size                             int
	shuffle                                int64
	blockSize, stripe, minDomain, cbBuffer string
	rankfile                               string
	threshold                              float64
	record, file                           string
	call                                   int64
}

func placeCmd(args []string, stdout, stderr io.Writer) int {
	var f placeFlags
	fs := flag.NewFlagSet("place", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, placeUsage); fs.PrintDefaults() }
	fs.IntVar(&f.nodes, "nodes", 0, "number of nodes (required)")
	fs.IntVar(&f.cores, "cores-per-node", 0, "cores (slots) per node (required)")
	fs.StringVar(&f.grid, "grid", "", "process grid, e.g. 4x8 or 4x4x2")
	fs.StringVar(&f.array, "array", "", "global array in elements, e.g. 1024x1024")
	fs.StringVar(&f.block, "block", "", "each rank's block in elements (instead of -array)")
	fs.IntVar(&f.elem, "elem", 8, "bytes per array element")
	fs.Int64Var(&f.shuffle, "shuffle", 0, "scramble the ranks over the grid with this seed (0: MPI_Cart order)")
	fs.StringVar(&f.pattern, "pattern", "", "coll_perf, e3sm, btio, s3d, ior-segmented or ior-strided (default: -grid)")
	fs.IntVar(&f.ranks, "ranks", 0, "number of ranks (patterns; with -grid it must match the grid)")
	fs.IntVar(&f.size, "size", 256, "coll_perf array edge in int32 elements")
	fs.StringVar(&f.blockSize, "block-size", "1m", "IOR block size per rank and segment")
	fs.IntVar(&f.segments, "segments", 16, "IOR segments (ior-strided)")
	fs.IntVar(&f.cbNodes, "cb_nodes", 0, "cb_nodes hint: aggregators (0: one per node)")
	fs.StringVar(&f.stripe, "striping_unit", "0", "striping_unit hint: domain edges on multiples of it")
	fs.StringVar(&f.minDomain, "romio_min_fdomain_size", "0", "romio_min_fdomain_size hint")
	fs.StringVar(&f.cbBuffer, "cb_buffer_size", "16m", "cb_buffer_size hint (affinity domains' blocks must fit it)")
	fs.Float64Var(&f.threshold, "threshold", place.DefaultMinFraction, "SetMatch ignores matrix entries below this fraction of the largest")
	fs.StringVar(&f.record, "record", "", "read the pattern from a COLLIO_RECORD directory")
	fs.StringVar(&f.file, "file", "", "with -record: the recorded file's base name (needed when several were recorded)")
	fs.Int64Var(&f.call, "call", 0, "with -record: the collective call's number (default: the first write)")
	fs.StringVar(&f.hosts, "hosts", "", "comma-separated host names for the rankfile (default node0,node1,...)")
	fs.StringVar(&f.rankfile, "rankfile", "", "write the SetMatch rankfile here (default: print it)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "collio place: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := f.run(stdout); err != nil {
		fmt.Fprintf(stderr, "collio place: %v\n", err)
		return 1
	}
	return 0
}

func (f *placeFlags) run(stdout io.Writer) error {
	if f.nodes < 1 || f.cores < 1 {
		return fmt.Errorf("-nodes and -cores-per-node are required and must be positive (got %d and %d)", f.nodes, f.cores)
	}
	acc, what, err := f.accesses()
	if err != nil {
		return err
	}
	hosts, err := f.hostNames()
	if err != nil {
		return err
	}
	var dom place.Domains
	if dom.Stripe, err = sizeFlag("striping_unit", f.stripe); err != nil {
		return err
	}
	if dom.MinDomain, err = sizeFlag("romio_min_fdomain_size", f.minDomain); err != nil {
		return err
	}
	cb, err := sizeFlag("cb_buffer_size", f.cbBuffer)
	if err != nil {
		return err
	}
	if cb < 1 {
		return fmt.Errorf("-cb_buffer_size %q: need at least 1 byte", f.cbBuffer)
	}
	arch := place.Arch{Nodes: f.nodes, CoresPerNode: f.cores}
	p, err := place.NewProblem(acc, arch, f.cbNodes, dom)
	if err != nil {
		return err
	}
	start := time.Now()
	sm, err := p.SetMatch(f.threshold)
	took := time.Since(start)
	if err != nil {
		return err
	}
	n := len(acc)
	defaults := []struct {
		name, form string
		m          place.Mapping
	}{{"byslot", "--map-by slot", place.BySlot(n, arch)}, {"bynode", "--map-by node", place.ByNode(n, arch)}}
	fmt.Fprintf(stdout, "%s: %d ranks on %d nodes x %d cores", what, n, f.nodes, f.cores)
	if f.cbNodes > 0 {
		fmt.Fprintf(stdout, ", cb_nodes=%d", f.cbNodes)
	}
	fmt.Fprintf(stdout, "\n\n| mapping | nodes used | aggregators | bytes crossing nodes | of all bytes |\n|---|---:|---:|---:|---:|\n")
	crossing := map[string]int64{}
	for _, c := range append(defaults, struct {
		name, form string
		m          place.Mapping
	}{"setmatch", "", sm}) {
		cross, total, err := p.Crossing(c.m)
		if err != nil {
			return err
		}
		crossing[c.name] = cross
		fmt.Fprintf(stdout, "| %s | %d | %d | %d | %.1f%% |\n", c.name, c.m.Nodes().Count(), len(p.Aggregators(c.m)),
			cross, 100*float64(cross)/float64(max(total, 1)))
	}
	seg := make([]string, 0, 3)
	for _, c := range []struct {
		name string
		m    place.Mapping
	}{{"byslot", defaults[0].m}, {"bynode", defaults[1].m}, {"setmatch", sm}} {
		cross, total, err := p.SegmentCrossing(c.m)
		if err != nil {
			return err
		}
		seg = append(seg, fmt.Sprintf("%s %d (%.1f%%)", c.name, cross, 100*float64(cross)/float64(max(total, 1))))
	}
	fmt.Fprintf(stdout, "\nWith segmentation (collio_strategy=static or dynamic: each rank's data to its group's aggregator)\n"+
		"the bytes crossing nodes are: %s.\n", strings.Join(seg, ", "))
	aff := make([]string, 0, 3)
	applies := false
	for _, c := range []struct {
		name string
		m    place.Mapping
	}{{"byslot", defaults[0].m}, {"bynode", defaults[1].m}, {"setmatch", sm}} {
		cross, total, ok, err := p.AffinityCrossing(c.m, cb)
		if err != nil {
			return err
		}
		applies = applies || ok
		aff = append(aff, fmt.Sprintf("%s %d (%.1f%%)", c.name, cross, 100*float64(cross)/float64(max(total, 1))))
	}
	if applies {
		fmt.Fprintf(stdout, "With collio's affinity domains (its default, cb_buffer_size %d; where they do not apply, ROMIO's):\n%s.\n",
			cb, strings.Join(aff, ", "))
	} else {
		fmt.Fprintf(stdout, "collio's affinity domains do not apply here (blocks too small, or most bytes would move): ROMIO's rule.\n")
	}
	fmt.Fprintf(stdout, "\nSetMatch took %s. The table: ROMIO's domains (collio_file_domains=aligned or even).\n", took.Round(time.Microsecond))
	for _, d := range defaults {
		switch {
		case slices.Equal(sm.Nodes().Of, d.m.Nodes().Of): // the same up to host names
			fmt.Fprintf(stdout, "SetMatch is %s: mpirun %s (with %d slots per host) suffices.\n", d.name, d.form, f.cores)
		case crossing[d.name] < crossing["setmatch"]:
			fmt.Fprintf(stdout, "%s crosses fewer bytes than SetMatch here: mpirun %s (with %d slots per host) is the better choice.\n",
				d.name, d.form, f.cores)
		}
	}
	rf := rankfile(sm, hosts)
	if f.rankfile == "" {
		fmt.Fprintf(stdout, "\nrankfile (mpirun -rf FILE):\n%s", rf)
		return nil
	}
	if err := os.WriteFile(f.rankfile, []byte(rf), 0o644); err != nil {
		return fmt.Errorf("writing the rankfile: %w", err)
	}
	fmt.Fprintf(stdout, "rankfile written to %s (mpirun -rf %s)\n", f.rankfile, f.rankfile)
	return nil
}

// rankfile is m in Open MPI's rankfile syntax: each rank on its host,
// bound to the next free slot (core) there. The nodes take the hosts in
// order of their lowest rank (rank 0 on the first host).
func rankfile(m place.Mapping, hosts []string) string {
	var b strings.Builder
	next := make([]int, len(hosts))
	for r, k := range m.Nodes().Of {
		fmt.Fprintf(&b, "rank %d=%s slot=%d\n", r, hosts[k], next[k])
		next[k]++
	}
	return b.String()
}

func (f *placeFlags) hostNames() ([]string, error) {
	if f.hosts == "" {
		hosts := make([]string, f.nodes)
		for k := range hosts {
			hosts[k] = "node" + strconv.Itoa(k)
		}
		return hosts, nil
	}
	hosts := strings.Split(f.hosts, ",")
	if len(hosts) != f.nodes {
		return nil, fmt.Errorf("-hosts names %d hosts for -nodes %d", len(hosts), f.nodes)
	}
	for i, h := range hosts {
		if h == "" || slices.Contains(hosts[:i], h) {
			return nil, fmt.Errorf("-hosts: host %d is empty or repeated (%q)", i, h)
		}
	}
	return hosts, nil
}

func sizeFlag(name, s string) (int64, error) {
	v, err := hints.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("-%s %q: %w", name, s, err)
	}
	return v, nil
}

// accesses builds every rank's access from the pattern flags and names the
// pattern.
func (f *placeFlags) accesses() ([]place.Access, string, error) {
	given := 0
	for _, s := range []string{f.pattern, f.grid, f.record} {
		if s != "" {
			given++
		}
	}
	if given > 1 {
		return nil, "", fmt.Errorf("give one of -grid, -pattern and -record")
	}
	if f.record != "" {
		return f.recordAccesses()
	}
	switch f.pattern {
	case "":
		return f.gridAccesses()
	case "coll_perf":
		if f.ranks < 1 {
			return nil, "", fmt.Errorf("-pattern coll_perf needs -ranks")
		}
		d := benchutil.DimsCreate(f.ranks)
		g := place.Grid{Sizes: []int{f.size, f.size, f.size}, Procs: d[:], Elem: 4}
		acc, err := g.Accesses()
		return acc, fmt.Sprintf("coll_perf %d^3 int32 on a %dx%dx%d grid", f.size, d[0], d[1], d[2]), err
	case "ior-segmented", "ior-strided":
		if f.ranks < 1 {
			return nil, "", fmt.Errorf("-pattern %s needs -ranks", f.pattern)
		}
		b, err := sizeFlag("block-size", f.blockSize)
		if err != nil {
			return nil, "", err
		}
		segs := f.segments
		if f.pattern == "ior-segmented" {
			segs = 1
		}
		acc, err := place.IOR{Ranks: f.ranks, Segments: segs, Block: b}.Accesses()
		return acc, fmt.Sprintf("IOR %d segments of %d-byte blocks", segs, b), err
	case "e3sm", "btio", "s3d":
		if f.ranks < 1 {
			return nil, "", fmt.Errorf("-pattern %s needs -ranks", f.pattern)
		}
		acc, what, err := place.Bench(f.pattern, f.ranks, place.DefaultSizes())
		return acc, what + "-like (testdata/patterns/README.md, collio sim's default sizes)", err
	}
	return nil, "", fmt.Errorf("unknown pattern %q (want coll_perf, e3sm, btio, s3d, ior-segmented or ior-strided, or -grid)", f.pattern)
}

func (f *placeFlags) recordAccesses() ([]place.Access, string, error) {
	file := f.file
	if file == "" {
		files, err := record.Files(f.record)
		if err != nil {
			return nil, "", err
		}
		if len(files) > 1 {
			names := slices.Sorted(maps.Keys(files))
			return nil, "", fmt.Errorf("%s holds records of %d files (%s): choose one with -file", f.record, len(names), strings.Join(names, ", "))
		}
		for name := range files {
			file = name
		}
	}
	seq := f.call
	if seq == 0 {
		var err error
		if seq, err = record.FirstWrite(f.record, file); err != nil {
			return nil, "", err
		}
	}
	calls, err := record.ReadCall(f.record, file, seq)
	if err != nil {
		return nil, "", err
	}
	if f.ranks > 0 && f.ranks != len(calls) {
		return nil, "", fmt.Errorf("the record of %s has %d ranks, but -ranks is %d", file, len(calls), f.ranks)
	}
	acc, err := place.FromRecord(calls)
	return acc, fmt.Sprintf("recorded %s call %d (%s)", file, seq, calls[0].Op), err
}

func (f *placeFlags) gridAccesses() ([]place.Access, string, error) {
	if f.grid == "" {
		return nil, "", fmt.Errorf("no pattern: give -grid or -pattern")
	}
	procs, err := dims("grid", f.grid)
	if err != nil {
		return nil, "", err
	}
	var sizes []int
	switch {
	case f.array != "" && f.block != "":
		return nil, "", fmt.Errorf("give either -array or -block, not both")
	case f.array != "":
		sizes, err = dims("array", f.array)
	case f.block != "":
		sizes, err = dims("block", f.block)
		for i := range sizes {
			if i < len(procs) {
				sizes[i] *= procs[i]
			}
		}
	default:
		return nil, "", fmt.Errorf("-grid needs -array or -block")
	}
	if err != nil {
		return nil, "", err
	}
	if len(sizes) != len(procs) {
		return nil, "", fmt.Errorf("-grid %s has %d dimensions but the array %d", f.grid, len(procs), len(sizes))
	}
	g := place.Grid{Sizes: sizes, Procs: procs, Elem: f.elem}
	n := g.Ranks()
	if f.ranks > 0 && f.ranks != n {
		return nil, "", fmt.Errorf("-grid %s has %d ranks, but -ranks is %d", f.grid, n, f.ranks)
	}
	what := fmt.Sprintf("grid %s over %s elements of %d bytes", f.grid, joinDims(sizes), f.elem)
	if f.shuffle != 0 {
		g.Order = rand.New(rand.NewPCG(uint64(f.shuffle), 0)).Perm(n)
		what += fmt.Sprintf(", ranks shuffled (seed %d)", f.shuffle)
	}
	acc, err := g.Accesses()
	return acc, what, err
}

// dims parses "AxBxC" (2 or 3 positive integers).
func dims(name, s string) ([]int, error) {
	parts := strings.Split(s, "x")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("-%s %q: want 2 or 3 sizes like 4x8 or 4x4x2", name, s)
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-%s %q: %q is not a positive integer", name, s, p)
		}
		out[i] = v
	}
	return out, nil
}

func joinDims(d []int) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, "x")
}
