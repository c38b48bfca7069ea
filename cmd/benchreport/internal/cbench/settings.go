// Package cbench runs the C benchmarks (make cbench): the same C programs
// (bench/c, IOR, E3SM-IO) launched plain on the host MPI-IO and with
// libcollio preloaded, in rounds whose variant order rotates, one record
// per launch (internal/records), then the report (internal/cbreport).
package cbench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Usage is cbench's help (scripts/cbench.sh -h).
const Usage = `usage: [VAR=value ...] scripts/cbench.sh [-h]

Runs C MPI-IO programs with the host MPI-IO variants and with libcollio
preloaded, and writes results/cbench.md (medians and ratios to the best host
variant) and results/cbench.tsv (every launch, with its command).

Programs (PROGRAMS):
  collperf     bench/c/collperf.c: 3-D int array, darray views, R x write_all then R x read_all, verified
  callcost     bench/c/callcost.c: K x write_at_all then K x read_at_all of B bytes per rank, verified
  ior-seg      IOR -a MPIIO -c, one segment per rank: -b K*B -t B -s 1   (needs IOR=/path/to/ior)
  ior-strided  IOR -a MPIIO -c, K segments: -b B -t B -s K                (needs IOR=/path/to/ior)
  Both IOR programs add -w -r -C -e -i 1.
  ior-seg-own, ior-strided-own   the same without -C: each rank reads back its own data
  e3sm         E3SM-IO (the TAM paper's workload): e3sm_io -k -o DIR/out.nc MAP, PnetCDF canonical
               layout, for the F, G and I cases' 16-rank maps (needs E3SM_IO=/path/to/e3sm_io); its own
               cells (E3SM_CASES x E3SM_NP x E3SM_DIRS) and variants (E3SM_VARIANTS); the output files
               of every launch are compared with cmp to E3SM_REF's of the same round and checked with
               ncvalidator

Variants (VARIANTS):
  individual vulcan two_phase dynamic dynamic_gen2   host OMPIO: --mca io ompio --mca fcoll NAME
  ompio                                             host OMPIO with its own fcoll choice
  romio321 (any romio*)                             host ROMIO: --mca io NAME
  collio                                            -x LD_PRELOAD=$LIBCOLLIO, no hints
  collio:S                                          collio with the hint collio_strategy=S
                                                    (twophase dynamic static tam independent)
  NAME+k=v,k=v                                      any of the above with these MPI_Info hints
                                                    (e.g. collio+romio_cb_write=disable,romio_cb_read=disable)
  gio                                               E3SM_VARIANTS only: PnetCDF 1.15's GIO driver, no MPI-IO
                                                    (PNETCDF_HINTS=nc_driver=gio; e.g. gio+nc_num_aggrs_per_node=2);
                                                    needs an e3sm_io whose PnetCDF has GIO, with which every
                                                    other variant runs with nc_driver=mpiio
  Hints reach collperf and callcost as -H k=v,..., IOR as IOR_HINT__MPI__k=v.
  Host fcoll components that ompi_info does not list are skipped with a note.

Settings (environment):
  NP="2 4"                 rank counts
  SIZES="16k 256k 1m 4m"   bytes per rank and collective call (B; collperf: N = round(cbrt(B*np/4)))
  DIRS="/dev/shm /var/tmp" directories (a fresh subdirectory of each is used and removed)
  ROUNDS=3                 launches per variant and cell; the tables show medians
  PROGRAMS="collperf callcost"   (plus "ior-seg ior-strided" when IOR is set, "e3sm" when E3SM_IO is)
  VARIANTS="individual vulcan two_phase romio321 collio collio:twophase collio:dynamic collio:static
            collio:tam collio:independent"
  DATA=64m MINCALLS=16 MAXCALLS=1024
                           calls per phase K = DATA/B, clamped to [MINCALLS, MAXCALLS]
                           (16k: 1024 calls, 256k: 256, 1m: 64, 4m: 16)
  QUICK=1                  a tiny matrix, under 2 minutes: NP=2 SIZES="16k 1m" ROUNDS=1
                           VARIANTS="individual romio321 collio collio:independent" DATA=4m MAXCALLS=256
  IOR=                     path of an IOR binary (built outside the repository: docs/benchmarks.md)
  E3SM_IO=                 path of an e3sm_io binary (built outside the repository: docs/benchmarks.md);
                           adds "e3sm" to the default PROGRAMS
  E3SM_DATASETS=<dir of E3SM_IO>/../datasets   where map_{f,g,i}_case_16p.nc are
  E3SM_CASES="f g i"       E3SM_NP="16 4"       E3SM_DIRS="/dev/shm"   (QUICK=1: g, np 4)
  E3SM_VARIANTS="romio321 individual ompio collio collio:twophase collio:tam+collio_node_size=4"
                           hints reach e3sm_io as -x PNETCDF_HINTS="k=v;k=v" (PnetCDF puts them in
                           the MPI_Info of MPI_File_open)
  E3SM_REF=ompio           the variant whose files the others are compared to (cmp), per cell and round
  E3SM_ARGS=               more e3sm_io options (e.g. "-r 2"; -k and -o are always given)
  NCVALIDATOR=ncvalidator  PnetCDF's file checker (Debian: pnetcdf-bin; else E3SM_IO's PnetCDF's bin/); the check is skipped without it
  LIBCOLLIO=bin/libcollio.so   the library to preload (make lib)
  MPICC=mpicc MPIRUN=mpirun MPIRUN_ARGS=   compiler, launcher (a command and its first arguments, e.g.
                           a wrapper that runs mpirun elsewhere), extra launcher arguments
  CLUSTER=NxP FS=gluster   run across the emulated cluster (bin/vcluster, as root): N compute nodes of P
                           ranks, files on GlusterFS (FS=shared: the nodes' shared directory); sets MPIRUN,
                           NP, E3SM_NP, DIRS and E3SM_DIRS, and adds wire_bytes and storage_bytes columns
  LAUNCH_TIMEOUT=300       seconds before a launch is killed (and reported as failed)
  RESULTS=results          output directory (cbench.md, cbench.tsv, cbench-logs/)

E3SM-IO results go to results/cbench-e3sm.tsv and a section of results/cbench.md:
per case, np and directory, each variant's median flush time (e3sm_io's "Time of
write flushing", max over ranks, summed over the h0/h1 files), open-to-close
MiB/s (all files' MiB / their summed end-to-end times), the ratios to romio321
and to the best host variant, and the file checks.

Exit status: 0 when every launch succeeded, every E3SM-IO file passed ncvalidator
and every collio variant's E3SM-IO files equalled E3SM_REF's; 1 otherwise (the
report is written anyway, with the failures in it; differences between host
variants are reported only); 2 for bad settings.
`

// Settings are cbench's knobs, from the environment.
type Settings struct {
	Root  string // the repository: bench/c, bin/
	Quick bool

	NP, Sizes, Dirs, Programs, Variants []string
	Rounds                              int
	Data                                string
	DataBytes, MinCalls, MaxCalls       int64

	IOR string

	E3SMIO, E3SMDatasets, E3SMRef, E3SMArgs, NCValidator string
	E3SMCases, E3SMNP, E3SMDirs, E3SMVariants            []string
	// E3SMGIO: E3SM_IO's PnetCDF has the GIO driver (HasGIO), its default.
	E3SMGIO bool

	LibCollio, MPICC string
	// MPIRun is the launcher and its first arguments: mpirun, or a wrapper
	// that launches elsewhere (the emulated cluster's "vcluster mpirun").
	MPIRun        []string
	MPIRunArgs    []string
	LaunchTimeout int
	Results       string
	// Cluster is "CLUSTER=NxP FS=..." when the launches run across the
	// emulated cluster (cluster.go).
	Cluster string
}

// BadSetting is an error in the settings (exit status 2).
type BadSetting struct{ msg string }

func (e BadSetting) Error() string { return e.msg }

func bad(format string, a ...any) error { return BadSetting{fmt.Sprintf(format, a...)} }

// FromEnv reads the settings from getenv, with the defaults (QUICK=1's
// own), and checks them; paths are made absolute.
func FromEnv(root string, getenv func(string) string) (*Settings, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	s := &Settings{Root: root, Quick: getenv("QUICK") == "1"}
	if s.Quick {
		s.NP = strings.Fields(env("NP", "2"))
		s.Sizes = strings.Fields(env("SIZES", "16k 1m"))
		s.Variants = strings.Fields(env("VARIANTS", "individual romio321 collio collio:independent"))
		s.Data = env("DATA", "4m")
		s.E3SMCases = strings.Fields(env("E3SM_CASES", "g"))
		s.E3SMNP = strings.Fields(env("E3SM_NP", "4"))
	} else {
		s.NP = strings.Fields(env("NP", "2 4"))
		s.Sizes = strings.Fields(env("SIZES", "16k 256k 1m 4m"))
		s.Variants = strings.Fields(env("VARIANTS", "individual vulcan two_phase romio321 collio collio:twophase collio:dynamic collio:static collio:tam collio:independent"))
		s.Data = env("DATA", "64m")
		s.E3SMCases = strings.Fields(env("E3SM_CASES", "f g i"))
		s.E3SMNP = strings.Fields(env("E3SM_NP", "16 4"))
	}
	s.Dirs = strings.Fields(env("DIRS", "/dev/shm /var/tmp"))
	rounds, maxcalls := "3", "1024"
	if s.Quick {
		rounds, maxcalls = "1", "256"
	}
	var err error
	if s.Rounds, err = posint("ROUNDS", env("ROUNDS", rounds)); err != nil {
		return nil, err
	}
	mn, err := posint("MINCALLS", env("MINCALLS", "16"))
	if err != nil {
		return nil, err
	}
	mx, err := posint("MAXCALLS", env("MAXCALLS", maxcalls))
	if err != nil {
		return nil, err
	}
	if s.LaunchTimeout, err = posint("LAUNCH_TIMEOUT", env("LAUNCH_TIMEOUT", "300")); err != nil {
		return nil, err
	}
	s.MinCalls, s.MaxCalls = int64(mn), int64(mx)
	if mn > mx {
		return nil, bad("MINCALLS=%d is above MAXCALLS=%d", mn, mx)
	}
	if s.DataBytes, err = Bytes(s.Data); err != nil {
		return nil, bad("DATA=%s: want a size such as 64m", s.Data)
	}
	for _, n := range s.NP {
		if _, err := posint("NP", n); err != nil {
			return nil, err
		}
	}
	for _, z := range s.Sizes {
		b, err := Bytes(z)
		if err != nil {
			return nil, bad("SIZES: %s is not a size (16k, 1m, 4m, 65536)", z)
		}
		if b == 0 {
			return nil, bad("SIZES: %s is zero", z)
		}
	}
	for _, d := range s.Dirs {
		if !isDir(d) {
			return nil, bad("DIRS: %s is not a directory", d)
		}
	}

	s.IOR, s.E3SMIO = getenv("IOR"), getenv("E3SM_IO")
	if p := getenv("PROGRAMS"); p != "" {
		s.Programs = strings.Fields(p)
	} else {
		s.Programs = []string{"collperf", "callcost"}
		if s.IOR != "" {
			s.Programs = append(s.Programs, "ior-seg", "ior-strided")
		}
		if s.E3SMIO != "" {
			s.Programs = append(s.Programs, "e3sm")
		}
	}
	for _, p := range s.Programs {
		switch p {
		case "collperf", "callcost":
		case "ior-seg", "ior-strided", "ior-seg-own", "ior-strided-own":
			if s.IOR == "" {
				return nil, bad("PROGRAMS has %s: set IOR=/path/to/ior (docs/benchmarks.md)", p)
			}
		case "e3sm":
			if s.E3SMIO == "" {
				return nil, bad("PROGRAMS has e3sm: set E3SM_IO=/path/to/e3sm_io (docs/benchmarks.md)")
			}
		default:
			return nil, bad("PROGRAMS: unknown program %s (collperf callcost ior-seg ior-strided ior-seg-own ior-strided-own e3sm)", p)
		}
	}
	if s.IOR != "" {
		if !isExec(s.IOR) {
			return nil, bad("IOR=%s is not an executable", s.IOR)
		}
		s.IOR = abs(s.IOR)
	}

	s.E3SMDirs = strings.Fields(env("E3SM_DIRS", "/dev/shm"))
	s.E3SMVariants = strings.Fields(env("E3SM_VARIANTS", "romio321 individual ompio collio collio:twophase collio:tam+collio_node_size=4"))
	s.E3SMRef = env("E3SM_REF", "ompio")
	s.E3SMArgs = getenv("E3SM_ARGS")
	s.NCValidator = env("NCVALIDATOR", "ncvalidator")
	if s.RunE3SM() {
		if !isExec(s.E3SMIO) {
			return nil, bad("E3SM_IO=%s is not an executable", s.E3SMIO)
		}
		s.E3SMIO = abs(s.E3SMIO)
		s.E3SMDatasets = env("E3SM_DATASETS", filepath.Join(filepath.Dir(filepath.Dir(s.E3SMIO)), "datasets"))
		if !isDir(s.E3SMDatasets) {
			return nil, bad("E3SM_DATASETS=%s is not a directory (the datasets/ of E3SM-IO's source tree)", s.E3SMDatasets)
		}
		s.E3SMDatasets = abs(s.E3SMDatasets)
		for _, c := range s.E3SMCases {
			if c != "f" && c != "g" && c != "i" {
				return nil, bad("E3SM_CASES: unknown case %s (f g i)", c)
			}
			if m := s.E3SMMap(c); !isFile(m) {
				return nil, bad("no %s", m)
			}
		}
		for _, n := range s.E3SMNP {
			if _, err := posint("E3SM_NP", n); err != nil {
				return nil, err
			}
		}
		for _, d := range s.E3SMDirs {
			if !isDir(d) {
				return nil, bad("E3SM_DIRS: %s is not a directory", d)
			}
		}
		if len(s.E3SMCases) == 0 || len(s.E3SMNP) == 0 || len(s.E3SMDirs) == 0 {
			return nil, bad("E3SM_CASES, E3SM_NP and E3SM_DIRS must not be empty")
		}
	}

	s.LibCollio = env("LIBCOLLIO", filepath.Join(root, "bin", "libcollio.so"))
	s.MPICC = env("MPICC", "mpicc")
	s.MPIRun = strings.Fields(env("MPIRUN", "mpirun"))
	s.MPIRunArgs = strings.Fields(getenv("MPIRUN_ARGS"))
	s.Results = env("RESULTS", filepath.Join(root, "results"))
	return s, nil
}

// CPrograms is the programs of the size cells (all but e3sm, which has
// cells of its own).
func (s *Settings) CPrograms() []string {
	return slices.DeleteFunc(slices.Clone(s.Programs), func(p string) bool { return p == "e3sm" })
}

// RunE3SM: e3sm is among the programs.
func (s *Settings) RunE3SM() bool { return slices.Contains(s.Programs, "e3sm") }

// E3SMMap is the case's decomposition map.
func (s *Settings) E3SMMap(c string) string {
	return filepath.Join(s.E3SMDatasets, "map_"+c+"_case_16p.nc")
}

// Calls is the calls per phase for calls of b bytes: DATA/b clamped to
// [MINCALLS, MAXCALLS].
func (s *Settings) Calls(b int64) int64 {
	return min(max(s.DataBytes/b, s.MinCalls), s.MaxCalls)
}

// Rerun is the settings as a command line that reruns them.
func (s *Settings) Rerun() string {
	q := func(xs []string) string { return "'" + strings.Join(xs, " ") + "'" }
	quick := "0"
	if s.Quick {
		quick = "1"
	}
	var b strings.Builder
	if len(s.CPrograms()) > 0 {
		fmt.Fprintf(&b, "QUICK=%s NP=%s SIZES=%s DIRS=%s ROUNDS=%d PROGRAMS=%s VARIANTS=%s", quick, q(s.NP), q(s.Sizes), q(s.Dirs),
			s.Rounds, q(s.Programs), q(s.Variants))
		fmt.Fprintf(&b, " DATA=%s MINCALLS=%d MAXCALLS=%d", s.Data, s.MinCalls, s.MaxCalls)
	} else {
		fmt.Fprintf(&b, "QUICK=%s ROUNDS=%d PROGRAMS=%s", quick, s.Rounds, q(s.Programs))
	}
	if s.IOR != "" {
		fmt.Fprintf(&b, " IOR=%s", s.IOR)
	}
	if s.RunE3SM() {
		fmt.Fprintf(&b, " E3SM_IO=%s E3SM_DATASETS=%s E3SM_CASES=%s E3SM_NP=%s", s.E3SMIO, s.E3SMDatasets, q(s.E3SMCases), q(s.E3SMNP))
		fmt.Fprintf(&b, " E3SM_DIRS=%s E3SM_VARIANTS=%s E3SM_REF=%s", q(s.E3SMDirs), q(s.E3SMVariants), s.E3SMRef)
		if s.E3SMArgs != "" {
			fmt.Fprintf(&b, " E3SM_ARGS='%s'", s.E3SMArgs)
		}
	}
	if s.Cluster != "" {
		fmt.Fprintf(&b, " %s", s.Cluster)
	} else if len(s.MPIRun) != 1 || s.MPIRun[0] != "mpirun" {
		fmt.Fprintf(&b, " MPIRUN=%s", q(s.MPIRun))
	}
	if len(s.MPIRunArgs) > 0 {
		fmt.Fprintf(&b, " MPIRUN_ARGS=%s", q(s.MPIRunArgs))
	}
	b.WriteString(" scripts/cbench.sh")
	return b.String()
}

// Bytes converts 16k, 1m, 4m, 123 to a byte count.
func Bytes(v string) (int64, error) {
	m := int64(1)
	switch strings.ToLower(v[len(v)-min(len(v), 1):]) {
	case "k":
		m = 1 << 10
	case "m":
		m = 1 << 20
	case "g":
		m = 1 << 30
	}
	n := v
	if m > 1 {
		n = v[:len(v)-1]
	}
	if n == "" || strings.TrimLeft(n, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a size", v)
	}
	x, err := strconv.ParseInt(n, 10, 64)
	return x * m, err
}

func posint(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, bad("%s=%s: want a positive integer", name, v)
	}
	return n, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
