package benchutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// PeakRSS returns the process's peak resident set size in bytes (VmHWM in
// /proc/self/status), or -1 where there is no such file.
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	return ParseVmHWM(f)
}

func ParseVmHWM(f io.Reader) int64 {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		var kb int64
		var unit string
		if n, _ := fmt.Sscan(rest, &kb, &unit); n == 2 && unit == "kB" {
			return kb << 10
		}
	}
	return -1
}

// ResetPeakRSS returns freed Go heap to the OS and then sets VmHWM back to
// the current RSS (Linux: "5" into /proc/self/clear_refs), so the peak
// read after an implementation ran is that implementation's. It reports
// whether the reset worked.
func ResetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// FSType names the file system holding dir, from statfs's magic number.
func FSType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	magic := uint64(st.Type) & 0xffffffff
	if name, ok := fsMagic[magic]; ok {
		return name
	}
	return fmt.Sprintf("0x%x", magic)
}

var fsMagic = map[uint64]string{
	0x01021994: "tmpfs",
	0x0000ef53: "ext4",
	0x58465342: "xfs",
	0x9123683e: "btrfs",
	0x00006969: "nfs",
	0x0bd00bd0: "lustre",
	0x47504653: "gpfs",
	0x19830326: "beegfs",
	0x794c7630: "overlayfs",
	0x65735546: "fuse",
	0x2fc12fc1: "zfs",
	0x00c36400: "cephfs",
	0x858458f6: "ramfs",
}

// LaunchRank is this process's rank as the launcher tells it, before MPI
// is initialised (0 when unknown), so that only one rank prints flag
// errors.
func LaunchRank() int {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"} {
		if r, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return r
		}
	}
	return 0
}

// HostLabel names the host MPI-IO component selected through Open MPI's
// MCA environment (mpirun --mca io X --mca fcoll Y sets OMPI_MCA_io and
// OMPI_MCA_fcoll in every rank): mpiio:ompio/vulcan, mpiio:romio321,
// mpiio:default when nothing is selected.
func HostLabel(getenv func(string) string) string {
	ioc, fcoll := getenv("OMPI_MCA_io"), getenv("OMPI_MCA_fcoll")
	switch {
	case ioc == "" && fcoll == "":
		return "mpiio:default"
	case strings.Contains(ioc, "romio"):
		return "mpiio:" + ioc // fcoll is OMPIO's; ROMIO ignores it
	case ioc == "":
		return "mpiio:default/" + fcoll
	case fcoll == "":
		return "mpiio:" + ioc
	}
	return "mpiio:" + ioc + "/" + fcoll
}

// HostMCA returns the Open MPI I/O components selected in the environment
// (io, fcoll, fbtl, fs, sharedfp), for the JSON.
func HostMCA(getenv func(string) string) map[string]string {
	m := map[string]string{}
	for _, k := range []string{"io", "fcoll", "fbtl", "fs", "sharedfp"} {
		if v := getenv("OMPI_MCA_" + k); v != "" {
			m[k] = v
		}
	}
	return m
}

// ParseImpls parses an -impl list: collio and mpiio, each at most once.
func ParseImpls(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		switch name = strings.TrimSpace(name); name {
		case "collio", "mpiio":
			if slices.Contains(out, name) {
				return nil, fmt.Errorf("-impl %q: %s given twice (use -i for repetitions)", s, name)
			}
			out = append(out, name)
		default:
			return nil, fmt.Errorf("-impl %q: %q is not an implementation; allowed: collio, mpiio", s, name)
		}
	}
	return out, nil
}

// UsageError is returned by flag parsing for -h: the text to print.
type UsageError struct{ Usage string }

func (e UsageError) Error() string { return "help requested" }

// DimsCreate factors n ranks into a 3-D grid as balanced as possible, the
// largest dimension first (like MPI_Dims_create).
func DimsCreate(n int) [3]int {
	best := [3]int{n, 1, 1}
	score := func(d [3]int) int { return max(d[0], d[1], d[2]) - min(d[0], d[1], d[2]) }
	for a := 1; a <= n; a++ {
		if n%a != 0 {
			continue
		}
		for b := 1; b <= n/a; b++ {
			if (n/a)%b != 0 {
				continue
			}
			d := [3]int{a, b, n / a / b}
			slices.SortFunc(d[:], func(x, y int) int { return y - x })
			if score(d) < score(best) {
				best = d
			}
		}
	}
	return best
}

// Split1 splits n items over p parts and returns part i's start and
// length; the first n%p parts get one more.
func Split1(n, p, i int) (start, size int) {
	base, rem := n/p, n%p
	size = base
	if i < rem {
		size++
	}
	return i*base + min(i, rem), size
}

// Main is a benchmark command's main function: parse the arguments; on -h
// print the usage (launch rank 0) and exit 0; on a bad argument print the
// error naming the command (launch rank 0) and exit 2; else exit with run's
// status.
func Main[C any](name string, parse func(args []string) (C, error), run func(C) int) {
	cfg, err := parse(os.Args[1:])
	var help UsageError
	switch {
	case errors.As(err, &help):
		if LaunchRank() == 0 {
			fmt.Print(help.Usage)
		}
		os.Exit(0)
	case err != nil:
		if LaunchRank() == 0 {
			fmt.Fprintf(os.Stderr, "%s: %v (%s -h lists the flags)\n", name, err, name)
		}
		os.Exit(2)
	}
	os.Exit(run(cfg))
}
