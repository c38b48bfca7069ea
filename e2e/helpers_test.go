//go:build cgo

package e2e

// What the end-to-end tests share: keeping the ranks together, their data,
// and the checks of errors and files after failed calls.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/mpirunner"
)

// ---------------------------------------------------------------------------
// Keeping the ranks together.

// checkpoint makes the ranks leave the test together: if the test has
// failed on any rank so far, it stops on every rank here, instead of
// leaving some ranks waiting in a collective that the failed rank never
// enters (which mpirunner would only end after its agreement timeout).
func checkpoint(t *testing.T, c comm.Comm) {
	t.Helper()
	var bad int64
	if t.Failed() {
		bad = 1
	}
	out := []int64{0}
	require.NoError(t, c.AllreduceInt64([]int64{bad}, out, comm.OpMax), "agreeing on the progress of the test")
	if out[0] != 0 {
		t.FailNow()
	}
}

// together reports err (if any) and then stops every rank if any rank has
// failed.
func together(t *testing.T, c comm.Comm, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", fmt.Sprintf(format, args...), err)
	}
	checkpoint(t, c)
}

// gatherStrings returns every rank's s, in rank order, on every rank.
func gatherStrings(t *testing.T, c comm.Comm, s string) []string {
	t.Helper()
	var mine [8]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(len(s)))
	lens := make([]byte, 8*c.Size())
	require.NoError(t, c.Allgather(mine[:], lens), "gathering string lengths")
	counts := make([]int, c.Size())
	displs := make([]int, c.Size())
	total := 0
	for r := range counts {
		counts[r] = int(binary.LittleEndian.Uint64(lens[8*r:]))
		displs[r] = total
		total += counts[r]
	}
	recv := make([]byte, total)
	require.NoError(t, c.Allgatherv([]byte(s), recv, counts, displs), "gathering strings")
	out := make([]string, c.Size())
	for r := range out {
		out[r] = string(recv[displs[r] : displs[r]+counts[r]])
	}
	return out
}

// sumInt64 is the sum of v over the ranks.
func sumInt64(t *testing.T, c comm.Comm, v int64) int64 {
	t.Helper()
	out := []int64{0}
	require.NoError(t, c.AllreduceInt64([]int64{v}, out, comm.OpSum))
	return out[0]
}

// ---------------------------------------------------------------------------
// Data.

// pattern returns n bytes that depend on the rank, the position and salt,
// and are never zero, so that data is told apart from the holes of a file.
func pattern(n, rank, salt int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(1 + (i*131+i/251*17+rank*57+salt*13)%251)
	}
	return b
}

// fillByte prefills read buffers: the holes of a noncontiguous memory
// type must keep it.
const fillByte = 0xEE

// firstDiff describes where two files differ.
func firstDiff(got, want []byte) string {
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: %#x, want %#x (sizes %d and %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("sizes differ: %d, want %d (equal up to %d)", len(got), len(want), n)
}

// ---------------------------------------------------------------------------
// Errors under MPI.

// expectError checks that err has the class want and that every rank got
// the very same error text (for collective calls). It returns the text.
func expectError(t *testing.T, c comm.Comm, err, want error, what string, sameText bool) string {
	t.Helper()
	msg := ""
	if err == nil {
		t.Errorf("%s: no error, want %v", what, want)
	} else {
		msg = err.Error()
		if !errors.Is(err, want) {
			t.Errorf("%s: error %q, want class %v", what, msg, want)
		}
	}
	all := gatherStrings(t, c, msg)
	for r, m := range all {
		if m == "" && c.Rank() == 0 {
			t.Errorf("%s: no error on rank %d", what, r)
		}
		if sameText && m != all[0] && c.Rank() == 0 {
			t.Errorf("%s: rank %d got %q, rank 0 got %q", what, r, m, all[0])
		}
	}
	checkpoint(t, c)
	return msg
}

// seed has rank 0 create path with content; every rank returns once the
// file exists.
func seed(t *testing.T, c comm.Comm, path string, content []byte) {
	t.Helper()
	var err error
	if c.Rank() == 0 {
		err = os.WriteFile(path, content, 0o644)
	}
	together(t, c, err, "creating %s", path)
}

// unchanged checks, once every rank got here, that path holds content.
func unchanged(t *testing.T, c comm.Comm, path string, content []byte) {
	t.Helper()
	together(t, c, c.Barrier(), "barrier")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading %s: %v", path, err)
	} else if !bytes.Equal(got, content) {
		t.Errorf("%s changed after failed calls: %s", path, firstDiff(got, content))
	}
	checkpoint(t, c)
}

// absent checks that path was not created.
func absent(t *testing.T, c comm.Comm, path string) {
	t.Helper()
	together(t, c, c.Barrier(), "barrier")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a failed open (stat: %v)", path, err)
	}
	checkpoint(t, c)
}

func mpiRun(t *testing.T, name string, fn func(t *testing.T, c comm.Comm)) {
	t.Run(name, func(t *testing.T) { mpirunner.Run(t, fn) })
}
