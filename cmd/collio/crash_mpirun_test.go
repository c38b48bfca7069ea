//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/collio/collio"
	"github.com/stretchr/testify/require"
)

// The program TestRankKilledUnderMpirun runs under mpirun is this test
// binary with crashEnv set to the mode ("write" or "cache") and
// crashDirEnv to the job's directory: crashwrite instead of the tests.
const (
	crashEnv    = "COLLIO_CRASHWRITE"
	crashDirEnv = "COLLIO_CRASHWRITE_DIR"
)

// Rank q writes crashPieces pieces of crashPiece bytes, piece k at file
// offset (k*p+q)*crashPiece, byte i of its data being crashByte(q, i).
const (
	crashPiece  = 1000
	crashPieces = 48
)

// crashByte is never zero, so that bytes not written yet show.
func crashByte(q, i int) byte { return byte(1 + (i*7+q*31+i/251)%251) }

// crashwrite is the MPI program; rank 1 dies (SIGKILL, the faulty
// driver's crash rule) at a chosen point:
//
//   - write: at its second file write as an aggregator of a two-phase
//     collective write of DIR/out;
//   - cache: every rank writes DIR/out through the E10 cache (DIR/cache,
//     flush_onclose, deferred close) and closes it, which starts the
//     copies in the background and returns; rank 1 dies at its second
//     copy to DIR/out, before or after its close returned (the copy races
//     with the close's agreement), and at the latest while Finalize waits
//     for the copies.
//
// Each rank prints "crashwrite: rank R pid N" once MPI is up,
// "crashwrite: rank R wrote" when its write returned and "crashwrite:
// rank R closed" when its close did. It never returns.
func crashwrite(mode, dir string) {
	runtime.LockOSThread() // MPI's calls from one thread
	world, err := collio.World()
	if err == nil {
		err = crashwriteRun(world, mode, dir)
		if ferr := collio.Finalize(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashwrite:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func crashwriteRun(world collio.Comm, mode, dir string) error {
	p, r := world.Size(), world.Rank()
	if p < 2 {
		return fmt.Errorf("needs 2 ranks or more: rank 1 dies")
	}
	fmt.Printf("crashwrite: rank %d pid %d\n", r, os.Getpid())
	h := collio.Hints{"collio_strategy": "twophase", "romio_cb_write": "enable", "cb_config_list": "*:*",
		"cb_nodes": strconv.Itoa(p), "cb_buffer_size": "8192",
		"collio_fault": "crash=write:2", "collio_fault_ranks": "1"}
	switch mode {
	case "write":
	case "cache":
		// The collective write lands in the caches; the copies to the
		// global file, in 4 KiB chunks, start at close and go on in the
		// background (E10's MPIWRAP mode).
		h["e10_cache"] = "enable"
		h["e10_cache_path"] = filepath.Join(dir, "cache")
		h["e10_cache_flush_flag"] = "flush_onclose"
		h["e10_cache_deferred_close"] = "enable"
		h["ind_wr_buffer_size"] = "4096"
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	f, err := collio.Open(world, "faulty:"+filepath.Join(dir, "out"), collio.ModeCreate|collio.ModeRdWr, h)
	if err != nil {
		return err
	}
	ft, err := collio.Resized(collio.Bytes(crashPiece), 0, int64(p*crashPiece))
	if err != nil {
		return err
	}
	if err := f.SetView(int64(r*crashPiece), collio.Byte, ft, nil); err != nil {
		return err
	}
	data := make([]byte, crashPiece*crashPieces)
	for i := range data {
		data[i] = crashByte(r, i)
	}
	if _, err := f.WriteAtAll(data, 0); err != nil {
		return err
	}
	fmt.Printf("crashwrite: rank %d wrote\n", r)
	// Every rank's write returned before any copy starts.
	if err := world.Barrier(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("crashwrite: rank %d closed\n", r)
	return nil
}

// crashWant is the file crashwrite writes on p ranks.
func crashWant(p int) []byte {
	want := make([]byte, p*crashPiece*crashPieces)
	for q := range p {
		for i := range crashPiece * crashPieces {
			k, j := i/crashPiece, i%crashPiece
			want[(k*p+q)*crashPiece+j] = crashByte(q, i)
		}
	}
	return want
}

// crashJob is one mpirun launch of testdata/crashwrite.
type crashJob struct {
	out      string        // mpirun's output, both streams
	err      error         // how mpirun ended
	took     time.Duration // until mpirun returned
	leftover []int         // processes of the program still alive after mpirun returned
}

// The bound on a job whose rank died: mpirun notices at once; a minute
// means it did not.
const crashJobLimit = time.Minute

// crashSetup returns mpirun and this test binary, skipping where there is
// no mpirun.
func crashSetup(t *testing.T) (mpirun, self string) {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun on PATH: killing a rank needs a real MPI job")
	}
	self, err = os.Executable()
	require.NoError(t, err)
	require.Equal(t, []int{os.Getpid()}, processesOf(t, self, 0), "processesOf does not see this test's own process alone")
	return mpirun, self
}

// runCrashJob runs crashwrite in mode on np ranks and waits for mpirun,
// at most crashJobLimit; it then lists the program's processes still
// alive (killing them, so that a failing test leaves none behind).
func runCrashJob(t *testing.T, mpirun, self string, np int, mode, dir string) crashJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), crashJobLimit)
	defer cancel()
	// Without -q: mpirun says which rank died of which signal.
	cmd := exec.CommandContext(ctx, mpirun, "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np),
		self, "-test.run=^TestRankKilledUnderMpirun$")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, crashEnv+"="+mode, crashDirEnv+"="+dir)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	j := crashJob{out: string(b), err: err, took: time.Since(start)}
	if ctx.Err() != nil {
		j.err = fmt.Errorf("mpirun still running after %v (killed): %w", crashJobLimit, err)
	}
	// A rank that mpirun failed to end outlives it. Nothing signals the
	// end of processes that are not this test's children, and one being
	// torn down may still show for a moment: what remains after a grace
	// period is left over.
	deadline := time.Now().Add(2 * time.Second)
	for {
		j.leftover = processesOf(t, self, os.Getpid())
		if len(j.leftover) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range j.leftover {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Logf("mpirun -np %d crashwrite %s: %v after %v\n%s", np, mode, j.err, j.took.Round(time.Millisecond), j.out)
	return j
}

// processesOf lists the live processes running the executable bin (this
// test binary, so no one else's) other than the process not.
func processesOf(t *testing.T, bin string, not int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == not {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == bin {
			pids = append(pids, pid)
		}
	}
	return pids
}

// checkKilled checks that the job ended because rank 1 was killed, in
// bounded time, with no process left, that every rank printed its pid
// line and the line "crashwrite: rank R must" (if must is not empty), and
// that no rank printed "crashwrite: rank R mustNot" (if not empty).
func checkKilled(t *testing.T, j crashJob, np int, must, mustNot string) {
	t.Helper()
	var ee *exec.ExitError
	require.True(t, errors.As(j.err, &ee), "mpirun must fail when a rank is killed: %v", j.err)
	require.Less(t, j.took, crashJobLimit)
	require.Empty(t, j.leftover, "processes of the job still running after mpirun returned (killed now)")
	require.Regexp(t, regexp.MustCompile(`rank 1 with PID \d+ on node \S+ exited on signal 9`), j.out,
		"mpirun must report rank 1 killed by SIGKILL")
	for r := range np {
		require.Contains(t, j.out, fmt.Sprintf("crashwrite: rank %d pid ", r))
		if must != "" {
			require.Contains(t, j.out, fmt.Sprintf("crashwrite: rank %d %s", r, must))
		}
		if mustNot != "" {
			require.NotContains(t, j.out, fmt.Sprintf("crashwrite: rank %d %s", r, mustNot))
		}
	}
}

// checkLanded requires every byte of path to be zero (not written yet) or
// want's, the file no longer than want, and returns how many bytes of
// want it holds.
func checkLanded(t *testing.T, path string, want []byte) int {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.LessOrEqual(t, len(got), len(want))
	landed := 0
	for i, b := range got {
		switch b {
		case want[i]:
			landed++
		case 0:
		default:
			require.Failf(t, "a byte the program did not write", "byte %d is %#x, want %#x or 0", i, b, want[i])
		}
	}
	return landed
}

// TestRankKilledUnderMpirun kills rank 1 (SIGKILL, through the faulty
// driver's crash rule) in the middle of a collective write, and while the
// E10 cache copies to the global file, under this machine's mpirun.
func TestRankKilledUnderMpirun(t *testing.T) {
	if mode := os.Getenv(crashEnv); mode != "" {
		crashwrite(mode, os.Getenv(crashDirEnv))
	}
	mpirun, self := crashSetup(t)

	// Rank 1 dies at its second write as an aggregator of a two-phase
	// write: mpirun ends the job, no rank returns from the call, nothing
	// is left running, and the file holds only the call's bytes.
	t.Run("collective-write", func(t *testing.T) {
		const np = 4
		dir := t.TempDir()
		j := runCrashJob(t, mpirun, self, np, "write", dir)
		checkKilled(t, j, np, "", "wrote")
		want := crashWant(np)
		landed := checkLanded(t, filepath.Join(dir, "out"), want)
		require.Positive(t, landed, "nothing landed: rank 1 died before the call wrote anything")
		require.Less(t, landed, len(want), "the whole call landed: rank 1 did not die in the middle of it")
		t.Logf("%d of %d bytes landed before the job ended", landed, len(want))
	})

	// Every rank's write returned into its cache, then rank 1 dies at its
	// second copy in the background. The global file misses data; collio
	// recover, on the job's private e10_cache_path, restores every byte
	// and leaves the directory empty.
	t.Run("e10-cache-copy", func(t *testing.T) {
		const np = 3
		dir := t.TempDir()
		cacheDir := filepath.Join(dir, "cache")
		j := runCrashJob(t, mpirun, self, np, "cache", dir)
		checkKilled(t, j, np, "wrote", "")
		out := filepath.Join(dir, "out")
		want := crashWant(np)
		landed := checkLanded(t, out, want)
		require.Less(t, landed, len(want), "the global file is whole before recovery: rank 1 did not die while copying")
		journals, _ := filepath.Glob(filepath.Join(cacheDir, "*.journal"))
		require.NotEmpty(t, journals, "no journal left in %s", cacheDir)

		var stdout, stderr bytes.Buffer
		code := run([]string{"recover", cacheDir}, &stdout, &stderr)
		t.Logf("collio recover %s: exit %d\n%s%s", cacheDir, code, stdout.String(), stderr.String())
		require.Equal(t, 0, code, "collio recover")
		require.Contains(t, stdout.String(), "copied (")
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.True(t, bytes.Equal(got, want), "after collio recover: %d bytes, want %d; %d bytes landed before", len(got), len(want), landed)
		left, _ := os.ReadDir(cacheDir)
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		require.Empty(t, names, "files left in the cache directory after recovery: %s", strings.Join(names, " "))
	})
}
