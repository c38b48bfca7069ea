//go:build cgo

// Command iorbench is an IOR-style bandwidth benchmark for collio and the
// host MPI-IO. Each rank writes, then reads, segments of blocks made of
// transfers; the flags are named like IOR's where they mean the same:
//
//	-b block size per rank and segment      -t transfer size (one call)
//	-s segment count                        -F file per process
//	-c collective calls (write_at_all)      -V use a file view
//	-w write   -r read                      -W check write (read back and verify after writing)
//	-R check read (verify what was read)    -e fsync at the end of writing
//	-C reorder tasks for reads (rank r reads what rank r+Q wrote, -Q 1)
//	-i repetitions   -o file path           -k keep the file
//	-d delay between repetitions (a compute phase: sleep, or -compute-busy)
//
// With neither -w nor -r (nor -W, -R) both are done. In a shared file the
// layout is IOR's: transfer k of segment s of rank r is at byte offset
// (s*np + r)*b + k*t; with -F each rank has its own file (path.00000003
// for rank 3, opened on a one-rank communicator) where it is at s*b + k*t.
// With -c every transfer is one collective call (MPI_File_write_at_all
// with explicit offsets, as IOR's MPIIO backend does); with -V the view
// shows a rank only its own blocks (displacement r*b, filetype b bytes
// resized to np*b) and offsets count within it. -C applies to reads and to
// the checks: rank r reads the blocks (or file) of rank (r+Q) mod np, so a
// client does not read back what it has in its own cache.
//
// Every 8-byte word holds a value computed from its file offset, the file
// and the repetition, so any rank can check any block. Data are generated
// before and checked after each call, outside the timed calls.
//
//	mpirun -np 4 iorbench -o /scratch/ior.dat -t 4k -b 4k -s 1024 -c -W -R
//	mpirun -np 4 iorbench -impl mpiio -o /scratch/ior.dat -t 4m -b 16m -c -C -e
//	mpirun -np 4 iorbench -impl collio -hint collio_strategy=twophase -o /scratch/ior.dat -json out.json
//
// Output: IOR-like lines per repetition (access, bw, IOPS, latency, block,
// xfer, open, wr/rd, close, total, iter), IOR's "Summary of all tests"
// (max/min/mean MiB/s and ops/s, mean time), collio's breakdown and memory
// per rank; -json writes the collperf-style JSON that benchreport reads.
// Hints come from -hints k=v,k=v, -hint k=v and -hintfile path (ROMIO's
// "key value" lines), in command-line order.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/internal/benchutil"
)

func init() { runtime.LockOSThread() } // MPI calls from the main thread

type config struct {
	block, xfer   int64
	segments      int
	filePerProc   bool
	collective    bool
	useView       bool
	write, read   bool
	checkWrite    bool
	checkRead     bool
	fsync         bool
	reorder       bool
	reorderOffset int
	iters         int
	path          string
	keep          bool
	quiet         bool
	impls         []string
	hints         collio.Hints
	hintSrc       map[string]string
	driver        string
	name          string
	jsonPath      string
	label         string
	workload      string
	delay         time.Duration // -d: compute phase between repetitions
	busy          bool          // -compute-busy
	// -overlap f,f,...: the overlap mode (overlap.go): compute times as
	// multiples of the I/O time; overlapRounds measurements each.
	overlap       []float64
	overlapRounds int
}

func main() { benchutil.Main("iorbench", parseFlags, run) }

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("iorbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	var block, xfer, impls string
	hs := benchutil.NewHintSet()
	fs.StringVar(&block, "b", "1m", "block size: contiguous bytes per rank and segment (k, m, g suffixes)")
	fs.StringVar(&xfer, "t", "256k", "transfer size: bytes per I/O call (a multiple of 8 dividing -b)")
	fs.IntVar(&c.segments, "s", 1, "segment count")
	fs.BoolVar(&c.filePerProc, "F", false, "file per process (each opened on a one-rank communicator)")
	fs.BoolVar(&c.collective, "c", false, "collective I/O: every transfer is a write_at_all / read_at_all")
	fs.BoolVar(&c.useView, "V", false, "use a file view showing each rank its own blocks (shared file)")
	fs.BoolVar(&c.write, "w", false, "write the file")
	fs.BoolVar(&c.read, "r", false, "read the file")
	fs.BoolVar(&c.checkWrite, "W", false, "check write: read the file back after writing and verify every value")
	fs.BoolVar(&c.checkRead, "R", false, "check read: verify every value read")
	fs.BoolVar(&c.fsync, "e", false, "fsync (MPI_File_sync) at the end of each write")
	fs.BoolVar(&c.reorder, "C", false, "reorder tasks for reads: rank r reads what rank (r+Q) mod np wrote")
	fs.IntVar(&c.reorderOffset, "Q", 1, "task offset for -C")
	fs.IntVar(&c.iters, "i", 1, "repetitions")
	delay := fs.String("d", "0", "delay (a compute phase) between repetitions: seconds as in IOR, or a duration such as 500ms")
	fs.BoolVar(&c.busy, "compute-busy", false, "spend -d spinning on the rank's thread instead of sleeping")
	fs.StringVar(&c.path, "o", "testFile", "file path (with -F, path.<rank as 8 digits>)")
	fs.BoolVar(&c.keep, "k", false, "keep the file(s) after each repetition")
	fs.BoolVar(&c.quiet, "q", false, "quiet: print nothing but errors (no progress either)")
	fs.StringVar(&impls, "impl", "collio,mpiio", "comma-separated implementations: collio, mpiio (the host MPI-IO; choose its component with mpirun --mca io/fcoll)")
	hs.AddFlags(fs)
	fs.StringVar(&c.driver, "driver", "", "collio driver for the file (e.g. sim); default: detected. Only with -impl collio")
	fs.StringVar(&c.name, "name", "collio", "label of the collio implementation in tables and JSON")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this file (rank 0)")
	fs.StringVar(&c.label, "label", "", "free-form label stored in the JSON (benchmark scripts name the storage with it)")
	fs.StringVar(&c.workload, "workload", "ior", "workload name in the JSON and reports (scripts tell IOR cases apart with it)")
	overlap := fs.String("overlap", "", "overlap mode: every transfer of a pass started nonblocking (iwrite_at_all), compute, then wait for all, against compute + the blocking calls, for compute times given as multiples of the I/O time (e.g. 0,0.5,1,2); collio only, needs -c, not -F")
	fs.IntVar(&c.overlapRounds, "overlap-rounds", 5, "measurements per figure in the overlap mode (the median is shown)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			b.WriteString("usage: mpirun -np N iorbench [-w] [-r] [-W] [-R] [-c] [-F] [-C] -o FILE -b SIZE -t SIZE -s N [flags]\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			return c, benchutil.UsageError{Usage: b.String()}
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (every option is a -flag)", fs.Arg(0))
	}
	var err error
	if c.block, err = benchutil.ParseBytes(block); err != nil {
		return c, fmt.Errorf("-b: %w", err)
	}
	if c.xfer, err = benchutil.ParseBytes(xfer); err != nil {
		return c, fmt.Errorf("-t: %w", err)
	}
	switch {
	case c.xfer <= 0 || c.xfer%8 != 0:
		return c, fmt.Errorf("-t %s: the transfer size must be a positive multiple of 8 bytes", xfer)
	case c.xfer > 1<<31-1:
		return c, fmt.Errorf("-t %s: at most 2 GiB - 1 per call", xfer)
	case c.block <= 0 || c.block%c.xfer != 0:
		return c, fmt.Errorf("-b %s: the block size must be a positive multiple of the transfer size %d", block, c.xfer)
	case c.segments < 1:
		return c, fmt.Errorf("-s %d: need at least one segment", c.segments)
	case c.iters < 1:
		return c, fmt.Errorf("-i %d: need at least one repetition", c.iters)
	case c.reorderOffset < 1:
		return c, fmt.Errorf("-Q %d: the task offset must be at least 1", c.reorderOffset)
	case c.useView && c.filePerProc:
		return c, fmt.Errorf("-V: a view applies to a shared file, not with -F")
	case c.path == "":
		return c, fmt.Errorf("-o: empty file path")
	case strings.ContainsAny(c.label, "\n\r"):
		return c, fmt.Errorf("-label: must be one line")
	case c.workload == "" || strings.ContainsAny(c.workload, " \t\n\r"):
		return c, fmt.Errorf("-workload %q: want one word", c.workload)
	}
	if c.delay, err = parseDelay(*delay); err != nil {
		return c, err
	}
	if !c.write && !c.read && !c.checkWrite && !c.checkRead {
		c.write, c.read = true, true
	}
	if c.checkWrite {
		c.write = true
	}
	if c.checkRead {
		c.read = true
	}
	if st, err := os.Stat(filepath.Dir(c.path)); err != nil {
		return c, fmt.Errorf("-o %s: %w", c.path, err)
	} else if !st.IsDir() {
		return c, fmt.Errorf("-o %s: %s is not a directory", c.path, filepath.Dir(c.path))
	}
	if c.impls, err = benchutil.ParseImpls(impls); err != nil {
		return c, err
	}
	if c.driver != "" && slices.Contains(c.impls, "mpiio") {
		return c, fmt.Errorf("-driver %s: the host MPI-IO cannot use collio drivers; use -impl collio", c.driver)
	}
	c.hints, c.hintSrc = collio.Hints(hs.Vals), hs.Source
	if *overlap != "" {
		if !c.collective || c.filePerProc {
			return c, fmt.Errorf("-overlap measures collective calls on a shared file: add -c, leave out -F")
		}
		if c.overlap, err = benchutil.OverlapFactors(fs, *overlap, c.impls, c.overlapRounds); err != nil {
			return c, err
		}
		c.impls = []string{"collio"}
	}
	return c, nil
}

// caseText describes the access pattern in one line (the JSON "case").
func (c config) caseText() string {
	parts := []string{fmt.Sprintf("-t %s -b %s -s %d", sizeText(c.xfer), sizeText(c.block), c.segments)}
	if c.filePerProc {
		parts = append(parts, "file per process")
	} else {
		parts = append(parts, "shared file")
	}
	if c.collective {
		parts = append(parts, "collective")
	} else {
		parts = append(parts, "independent")
	}
	if c.useView {
		parts = append(parts, "view")
	}
	if c.reorder {
		parts = append(parts, fmt.Sprintf("reordered reads (-C -Q %d)", c.reorderOffset))
	}
	if c.fsync {
		parts = append(parts, "fsync")
	}
	return strings.Join(parts, ", ")
}

// sizeText writes a size IOR-style: 4k, 1m, or bytes.
func sizeText(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dg", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dm", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dk", n>>10)
	}
	return fmt.Sprint(n)
}

// parseDelay reads -d: whole seconds, as IOR's -d, or a Go duration.
func parseDelay(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("-d %q: want seconds (IOR) or a duration >= 0 such as 500ms", s)
	}
	return d, nil
}
