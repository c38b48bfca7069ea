package cbench

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Variant is one way of running a program: a host MPI-IO component, or
// collio preloaded, with hints.
type Variant struct {
	Name  string // as given: collio:twophase+cb_nodes=2
	Base  string // without the hints: collio:twophase
	Hints []string
}

// ParseVariant splits NAME+k=v,k=v; collio:S adds collio_strategy=S first,
// gio nc_driver=gio.
func ParseVariant(name string) Variant {
	v := Variant{Name: name, Base: name}
	if base, hints, ok := strings.Cut(name, "+"); ok {
		v.Base = base
		v.Hints = strings.Split(hints, ",")
	}
	if s, ok := strings.CutPrefix(v.Base, "collio:"); ok {
		v.Hints = append([]string{"collio_strategy=" + s}, v.Hints...)
	}
	if v.GIO() {
		v.Hints = append([]string{"nc_driver=gio"}, v.Hints...)
	}
	return v
}

// Collio: the variant preloads libcollio.
func (v Variant) Collio() bool { return strings.HasPrefix(v.Base, "collio") }

// GIO: the variant is PnetCDF's own GIO driver (PnetCDF 1.15), which does
// its file I/O itself instead of through MPI-IO: an E3SM-IO variant only.
func (v Variant) GIO() bool { return v.Base == "gio" }

// Components is what ompi_info lists: "fcoll individual", "io romio321".
type Components map[string]bool

var component = regexp.MustCompile(`MCA (\w+): (\w+) \(`)

// ParseComponents reads ompi_info's output.
func ParseComponents(out string) Components {
	c := Components{}
	for _, m := range component.FindAllStringSubmatch(out, -1) {
		c[m[1]+" "+m[2]] = true
	}
	return c
}

// CheckVariants returns the variants of names that this host can run and
// notes for those skipped; a name it does not know is a bad setting.
// needsLib says a collio variant is among them.
func CheckVariants(setting string, names []string, have Components) (vs []Variant, notes []string, needsLib bool, err error) {
	for _, n := range names {
		v := ParseVariant(n)
		switch b := v.Base; {
		case b == "collio" || b == "collio:auto" || b == "collio:twophase" || b == "collio:dynamic" ||
			b == "collio:static" || b == "collio:tam" || b == "collio:independent":
			needsLib = true
		case strings.HasPrefix(b, "collio:"):
			return nil, nil, false, bad("%s: %s: unknown strategy (twophase dynamic static tam independent)", setting, n)
		case b == "gio":
			// Only PnetCDF reads nc_driver: the C programs and IOR would run
			// the host's default MPI-IO under GIO's name.
			if setting != "E3SM_VARIANTS" {
				return nil, nil, false, bad("%s: %s: PnetCDF's GIO driver is a variant of E3SM_VARIANTS only", setting, n)
			}
		case b == "ompio":
		case b == "individual" || b == "vulcan" || b == "two_phase" || b == "dynamic" || b == "dynamic_gen2":
			if !have["fcoll "+b] {
				notes = append(notes, fmt.Sprintf("%s: variant %s skipped: ompi_info lists no fcoll component %s", setting, n, b))
				continue
			}
		case strings.HasPrefix(b, "romio"):
			if !have["io "+b] {
				notes = append(notes, fmt.Sprintf("%s: variant %s skipped: ompi_info lists no io component %s", setting, n, b))
				continue
			}
		default:
			return nil, nil, false, bad("%s: unknown variant %s (see -h)", setting, n)
		}
		vs = append(vs, v)
	}
	return vs, notes, needsLib, nil
}

// Launcher builds launch commands.
type Launcher struct {
	S      *Settings
	Build  string // where the C programs are
	AsRoot bool   // mpirun needs --allow-run-as-root
	Cores  int    // more ranks than this: --oversubscribe (without MPIRUN_ARGS)
}

// prefix is the command up to the program: timeout, the launcher, the
// rank count, the variant's flags.
func (l Launcher) prefix(np int, v Variant) []string {
	s := l.S
	cmd := append([]string{"timeout", "-k", "10", strconv.Itoa(s.LaunchTimeout)}, s.MPIRun...)
	if l.AsRoot {
		cmd = append(cmd, "--allow-run-as-root")
	}
	cmd = append(cmd, s.MPIRunArgs...)
	cmd = append(cmd, "-np", strconv.Itoa(np))
	if len(s.MPIRunArgs) == 0 && np > l.Cores {
		cmd = append(cmd, "--oversubscribe")
	}
	switch b := v.Base; {
	case v.Collio():
		cmd = append(cmd, "-x", "LD_PRELOAD="+s.LibCollio)
	case v.GIO():
		// GIO calls no MPI_File_* function: no io component to choose.
	case b == "ompio":
		cmd = append(cmd, "--mca", "io", "ompio")
	case strings.HasPrefix(b, "romio"):
		cmd = append(cmd, "--mca", "io", b)
	default:
		cmd = append(cmd, "--mca", "io", "ompio", "--mca", "fcoll", b)
	}
	return cmd
}

// Command is one launch of a C program or IOR on np ranks, calls of b
// bytes, k calls per phase, its file in dir.
func (l Launcher) Command(prog string, np int, dir string, b, k int64, v Variant) []string {
	cmd := l.prefix(np, v)
	var hflag []string
	if strings.HasPrefix(prog, "ior-") {
		for _, h := range v.Hints {
			cmd = append(cmd, "-x", "IOR_HINT__MPI__"+h)
		}
	} else if len(v.Hints) > 0 {
		hflag = []string{"-H", strings.Join(v.Hints, ",")}
	}
	bs, ks := strconv.FormatInt(b, 10), strconv.FormatInt(k, 10)
	switch prog {
	case "collperf":
		cmd = append(cmd, l.Build+"/collperf", "-s", bs, "-r", ks, "-f", dir+"/collperf.dat")
	case "callcost":
		cmd = append(cmd, l.Build+"/callcost", "-c", ks, "-b", bs, "-f", dir+"/callcost.dat")
	case "ior-seg", "ior-seg-own":
		cmd = append(cmd, l.S.IOR, "-a", "MPIIO", "-c", "-b", strconv.FormatInt(k*b, 10), "-t", bs, "-s", "1", "-w", "-r")
		cmd = append(cmd, iorTail(prog, dir)...)
	case "ior-strided", "ior-strided-own":
		cmd = append(cmd, l.S.IOR, "-a", "MPIIO", "-c", "-b", bs, "-t", bs, "-s", ks, "-w", "-r")
		cmd = append(cmd, iorTail(prog, dir)...)
	}
	return append(cmd, hflag...)
}

// E3SMCommand is one e3sm_io launch writing out (out.nc, or out_h0.nc and
// out_h1.nc). Hints go through PnetCDF's PNETCDF_HINTS (k=v;k=v), which it
// adds to the MPI_Info of MPI_File_open (or of GIO_open).
func (l Launcher) E3SMCommand(np int, out, c string, v Variant) []string {
	cmd := l.prefix(np, v)
	hints := v.Hints
	if l.S.E3SMGIO && !v.GIO() {
		// GIO is PnetCDF 1.15's default driver: without this the host
		// variants and a preloaded collio would not be called at all. A
		// variant's own nc_driver comes later and wins.
		hints = append([]string{"nc_driver=mpiio"}, hints...)
	}
	if len(hints) > 0 {
		cmd = append(cmd, "-x", "PNETCDF_HINTS="+strings.Join(hints, ";"))
	}
	cmd = append(cmd, l.S.E3SMIO, "-k")
	cmd = append(cmd, strings.Fields(l.S.E3SMArgs)...)
	return append(cmd, "-o", out, l.S.E3SMMap(c))
}

// Shell is cmd as a shell command line, quoted where needed.
func Shell(cmd []string) string {
	q := make([]string, len(cmd))
	for i, w := range cmd {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
			q[i] = w
		} else {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// iorTail ends an IOR command: -C (each rank reads back another rank's
// data, so that no page cache serves the read) but for the -own programs,
// whose ranks read back their own.
func iorTail(prog, dir string) []string {
	var t []string
	if !strings.HasSuffix(prog, "-own") {
		t = append(t, "-C")
	}
	return append(t, "-e", "-i", "1", "-o", dir+"/ior.dat")
}

// HasGIO says whether the PnetCDF that the program runs with has the GIO
// driver: GIO_open is among the symbols of the program (a static PnetCDF)
// or of the libpnetcdf that ldd finds for it (PnetCDF 1.15 links GIO into
// it, as local symbols: a stripped library is not recognized).
func HasGIO(prog string) bool {
	files := []string{prog}
	if out, err := exec.Command("ldd", prog).Output(); err == nil {
		if lib := lddPath(string(out), "libpnetcdf.so"); lib != "" {
			files = append(files, lib)
		}
	}
	for _, f := range files {
		if hasSymbol(f, "GIO_open") {
			return true
		}
	}
	return false
}

// PnetCDFTool is the PnetCDF program tool of the PnetCDF that prog runs
// with, in the bin directory beside the lib directory of the libpnetcdf
// that ldd finds for it (a PnetCDF built from source and installed under
// one prefix); "" if there is none.
func PnetCDFTool(prog, tool string) string {
	out, err := exec.Command("ldd", prog).Output()
	if err != nil {
		return ""
	}
	return toolBeside(lddPath(string(out), "libpnetcdf.so"), tool)
}

// toolBeside is prefix/bin/tool for a library prefix/lib*/name, when it is
// an executable file.
func toolBeside(lib, tool string) string {
	if lib == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(filepath.Dir(lib)), "bin", tool)
	if !isExec(p) {
		return ""
	}
	return p
}

// lddPath is the path ldd's output gives for the library whose name
// starts with name ("libpnetcdf.so.8 => /opt/lib/libpnetcdf.so.8 (0x...)").
func lddPath(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.HasPrefix(f[0], name) && f[1] == "=>" {
			return f[2]
		}
	}
	return ""
}

// hasSymbol: the ELF file has sym in its symbol table or its dynamic one.
func hasSymbol(path, sym string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, s := range syms {
			if s.Name == sym && s.Section != elf.SHN_UNDEF {
				return true
			}
		}
	}
	return false
}
