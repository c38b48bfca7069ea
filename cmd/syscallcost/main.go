// Command syscallcost measures how the way a program issues its file
// system calls changes bandwidth when processes share cores: the same
// pwritev (or preadv) of each run issued from Go one call at a time, as
// raw system calls that the Go scheduler does not see, or from C, in one
// loop over all runs or in loops of 32. It uses no MPI: mpirun only starts
// the processes, and they start each repetition at the same wall-clock
// time. The file pattern is collperf's at 4 ranks on a 2x2x1 grid: ranks
// in pairs, each pair its own rows of 1 MiB, each member one half of every
// row.
//
//	scripts/syscallcost.sh                 # alternating launches of every mode, medians
//	mpirun -np 4 syscallcost -mode go -dir /var/tmp/x -start $(($(date +%s%N)+1500000000))
//
// Each rank prints one line per repetition: rank, repetition, start and
// end (Unix nanoseconds) of its calls.
package main

/*
#include <sys/types.h>
#include <sys/uio.h>

// runs issues n calls of len bytes each, from consecutive parts of buf at
// the offsets off; it returns how many moved all their bytes.
static long runs(int fd, int write, char *buf, long n, const long long *off, long len) {
	for (long i = 0; i < n; i++) {
		struct iovec v = { buf + i*len, (size_t)len };
		ssize_t got = write ? pwritev(fd, &v, 1, (off_t)off[i]) : preadv(fd, &v, 1, (off_t)off[i]);
		if (got != len)
			return i;
	}
	return n;
}
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The main goroutine stays on its thread, as in collio's MPI programs.
func init() { runtime.LockOSThread() }

const runSize = 512 << 10

func main() {
	mode := flag.String("mode", "go", "go | raw | c | c32 (writes), goread | cread (reads)")
	dir := flag.String("dir", "", "directory for the test file (required)")
	start := flag.Int64("start", 0, "wall-clock start of the first repetition, Unix nanoseconds (required)")
	runs := flag.Int("runs", 256, "runs of 512 KiB per rank")
	reps := flag.Int("reps", 8, "repetitions, 700 ms apart")
	flag.Parse()
	rank, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if *dir == "" || *start == 0 || err != nil {
		fmt.Fprintln(os.Stderr, "usage: mpirun -np 4 syscallcost -mode MODE -dir DIR -start UNIXNANO")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1) // as collio.ShareCores sets it with 2 ranks per core
	if err := run(*mode, filepath.Join(*dir, "syscallcost."+*mode), rank, *runs, *reps, time.Unix(0, *start)); err != nil {
		fmt.Fprintln(os.Stderr, "syscallcost:", err)
		os.Exit(1)
	}
}

func run(mode, path string, rank, runs, reps int, start time.Time) error {
	buf := make([]byte, runs*runSize)
	for k := range buf {
		buf[k] = byte(k * 7)
	}
	pair, half := rank/2, rank%2
	offs := make([]int64, runs)
	for x := range offs {
		offs[x] = int64(runs*pair+x)<<20 + int64(half)*runSize
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	write := mode == "go" || mode == "raw" || mode == "c" || mode == "c32"
	if !write {
		// Reads need the file: written once, before the timed reads.
		if err := cLoop(fd, true, buf, offs, runs); err != nil {
			return err
		}
	}
	for rep := 0; rep < reps; rep++ {
		for time.Now().Before(start.Add(time.Duration(rep) * 700 * time.Millisecond)) {
			time.Sleep(50 * time.Microsecond)
		}
		t0 := time.Now()
		if err := issue(mode, fd, buf, offs); err != nil {
			return err
		}
		t1 := time.Now()
		if write {
			unix.Fsync(fd)
		}
		fmt.Printf("%d %d %d %d\n", rank, rep, t0.UnixNano(), t1.UnixNano())
	}
	return nil
}

func issue(mode string, fd int, buf []byte, offs []int64) error {
	switch mode {
	case "go", "goread":
		for x, off := range offs {
			part := [][]byte{buf[x*runSize : (x+1)*runSize]}
			var n int
			var err error
			if mode == "go" {
				n, err = unix.Pwritev(fd, part, off)
			} else {
				n, err = unix.Preadv(fd, part, off)
			}
			if err != nil || n != runSize {
				return fmt.Errorf("%s at %d: %d bytes, %v", mode, off, n, err)
			}
		}
	case "raw":
		for x, off := range offs {
			iov := unix.Iovec{Base: &buf[x*runSize]}
			iov.SetLen(runSize)
			n, _, e := unix.RawSyscall6(unix.SYS_PWRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, uintptr(off), 0, 0)
			if e != 0 || n != runSize {
				return fmt.Errorf("raw pwritev at %d: %d bytes, %v", off, n, e)
			}
		}
	case "c", "cread":
		return cLoop(fd, mode == "c", buf, offs, len(offs))
	case "c32":
		for x := 0; x < len(offs); x += 32 {
			if err := cLoop(fd, true, buf[x*runSize:], offs[x:], min(32, len(offs)-x)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return nil
}

// cLoop issues n calls in one C call (buf and offs hold no pointers, so
// cgo lets C use them for the duration of the call).
func cLoop(fd int, write bool, buf []byte, offs []int64, n int) error {
	w := C.int(0)
	if write {
		w = 1
	}
	done := C.runs(C.int(fd), w, (*C.char)(unsafe.Pointer(&buf[0])), C.long(n), (*C.longlong)(unsafe.Pointer(&offs[0])), runSize)
	if int(done) != n {
		return fmt.Errorf("C loop stopped after %d of %d calls", done, n)
	}
	return nil
}
