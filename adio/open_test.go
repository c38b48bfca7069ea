package adio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenCreateCloseDelete(t *testing.T) {
	path := tempPath(t, "f")
	world(t, 4, func(c comm.Comm) error {
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{})
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(Bytes([]byte{byte('a' + c.Rank())}), int64(c.Rank())); err != nil {
			return err
		}
		return f.Close()
	})
	require.Equal(t, "abcd", string(readFile(t, path)))
	require.NoError(t, Delete(path))
	err := Delete(path)
	require.ErrorIs(t, err, ioerr.ErrNotFound)
}

func TestOpenErrorsAgreeOnEveryRank(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists")
	require.NoError(t, os.WriteFile(existing, []byte("keep"), 0o644))
	regular := filepath.Join(dir, "regular")
	require.NoError(t, os.WriteFile(regular, nil, 0o644))

	cases := []struct {
		name  string
		path  string
		mode  Mode
		hints map[string]string
		class *ioerr.Class
		words []string
	}{
		{"missing without create", filepath.Join(dir, "missing"), ModeRdOnly, nil, ioerr.ErrNotFound, []string{"does not exist", "without create"}},
		{"exclusive create of existing", existing, ModeCreate | ModeExcl | ModeWrOnly, nil, ioerr.ErrExists, []string{"exists"}},
		{"directory missing", filepath.Join(dir, "nodir", "f"), ModeCreate | ModeWrOnly, nil, ioerr.ErrNotFound, []string{"directory"}},
		{"path under a regular file", filepath.Join(regular, "f"), ModeCreate | ModeWrOnly, nil, ioerr.ErrNotFound, nil},
		// sysfs refuses new files even to root: an unwritable directory on any Linux machine.
		{"unwritable directory", "/sys/collio_test_file", ModeCreate | ModeWrOnly, nil, ioerr.ErrAccess, []string{"permission denied"}},
		{"rdonly with create", filepath.Join(dir, "x"), ModeRdOnly | ModeCreate, nil, ioerr.ErrAmode, []string{"rdonly"}},
		{"two access modes", filepath.Join(dir, "x"), ModeRdOnly | ModeWrOnly, nil, ioerr.ErrAmode, []string{"exactly one"}},
		{"bad hint value", existing, ModeRdOnly, map[string]string{"romio_cb_write": "sometimes"}, ioerr.ErrBadHint, []string{"romio_cb_write", "enable", "disable", "automatic"}},
		{"bad size hint", existing, ModeRdOnly, map[string]string{"cb_buffer_size": "-4"}, ioerr.ErrBadHint, []string{"cb_buffer_size"}},
		{"empty path", "", ModeRdOnly, nil, ioerr.ErrArg, []string{"empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := sameOnAll(t, 3, func(c comm.Comm) error {
				f, err := Open(c, tc.path, tc.mode, OpenOptions{Hints: tc.hints})
				if err == nil {
					f.Close()
				}
				return err
			})
			require.Error(t, errs[0])
			require.ErrorIs(t, errs[0], tc.class, "got %v", errs[0])
			for _, w := range tc.words {
				assert.Contains(t, errs[0].Error(), w)
			}
		})
	}
	require.Equal(t, "keep", string(readFile(t, existing)))
	_, err := os.Stat(filepath.Join(dir, "x"))
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing created by failed opens")
}

func TestOpenMismatchesBetweenRanks(t *testing.T) {
	path := tempPath(t, "f")
	errs := sameOnAll(t, 4, func(c comm.Comm) error {
		h := map[string]string{"cb_buffer_size": "16m"}
		if c.Rank() >= 2 {
			h["cb_buffer_size"] = "8m"
		}
		f, err := Open(c, path, ModeCreate|ModeWrOnly, OpenOptions{Hints: h})
		if err == nil {
			f.Close()
		}
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrNotSame)
	require.Contains(t, errs[0].Error(), "cb_buffer_size")
	require.Contains(t, errs[0].Error(), "2")

	errs = sameOnAll(t, 3, func(c comm.Comm) error {
		mode := ModeCreate | ModeWrOnly
		if c.Rank() == 1 {
			mode = ModeCreate | ModeRdWr
		}
		f, err := Open(c, path, mode, OpenOptions{})
		if err == nil {
			f.Close()
		}
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrNotSame)
}

func TestInfoShowsEffectiveHints(t *testing.T) {
	path := tempPath(t, "f")
	var sb strings.Builder
	world(t, 3, func(c comm.Comm) error {
		opts := OpenOptions{
			Hints:  map[string]string{"cb_buffer_size": "1m", "my_own_key": "kept"},
			Getenv: func(k string) string { return map[string]string{"COLLIO_PRINT_HINTS": "1"}[k] },
		}
		if c.Rank() == 0 {
			opts.Stderr = &sb
		}
		f, err := Open(c, path, ModeCreate|ModeWrOnly, opts)
		if err != nil {
			return err
		}
		info := f.Info()
		if info["cb_buffer_size"] != "1048576" || info["my_own_key"] != "kept" || info["cb_nodes"] != "1" ||
			info["romio_cb_write"] != "automatic" {
			return errors.New("unexpected info: " + strings.Join([]string{info["cb_buffer_size"], info["my_own_key"], info["cb_nodes"], info["romio_cb_write"]}, ","))
		}
		return f.Close()
	})
	require.Contains(t, sb.String(), "cb_buffer_size")
	require.Contains(t, sb.String(), "1048576")
}

// A switch variable collio does not accept, here on rank 2 only, fails the
// open on every rank (no rank waits for the others in a later collective)
// with rank 2's error naming it; so does the caller's own Local error.
func TestOpenRejectsBadEnvironment(t *testing.T) {
	path := tempPath(t, "f")
	errs := sameOnAll(t, 4, func(c comm.Comm) error {
		env := map[string]string{"COLLIO_SHARED_FP_SERVER": "1"}
		if c.Rank() == 2 {
			env["COLLIO_PRINT_HINTS"] = "yes please"
		}
		f, err := Open(c, path, ModeCreate|ModeWrOnly, OpenOptions{Getenv: func(k string) string { return env[k] }})
		if err == nil {
			f.Close()
		}
		return err
	})
	require.ErrorIs(t, errs[0], ioerr.ErrArg)
	require.ErrorContains(t, errs[0], `(rank 2): invalid argument: COLLIO_PRINT_HINTS="yes please" is not valid; accepted: 1, on, yes, true, 0, off, no, false`)
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err), "the failed open created the file")

	local := errors.New("the caller's check")
	errs = sameOnAll(t, 3, func(c comm.Comm) error {
		var opts OpenOptions
		if c.Rank() == 1 {
			opts.Local = local
		}
		f, err := Open(c, path, ModeCreate|ModeWrOnly, opts)
		if err == nil {
			f.Close()
		}
		return err
	})
	require.ErrorIs(t, errs[1], local)
	require.ErrorContains(t, errs[0], "(rank 1)")
	require.ErrorContains(t, errs[0], "the caller's check")
}

func TestDeleteOnCloseAndAppend(t *testing.T) {
	path := tempPath(t, "f")
	require.NoError(t, os.WriteFile(path, []byte("0123"), 0o644))
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeWrOnly|ModeAppend, OpenOptions{})
		if err != nil {
			return err
		}
		if f.Position() != 4 {
			return errors.New("append mode must start at end of file")
		}
		return f.Close()
	})
	world(t, 2, func(c comm.Comm) error {
		f, err := Open(c, path, ModeRdWr|ModeDeleteOnClose, OpenOptions{})
		if err != nil {
			return err
		}
		return f.Close()
	})
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Only rank 0 asks the file system what it is (a statfs, a round trip to
// the servers on NFS and FUSE); the others get the answer in the open's
// first agreement.
func TestOpenAsksTheFileSystemOnce(t *testing.T) {
	var asked atomic.Int32
	restore := driver.SetStatfsForTest(func(path string) (uint32, error) {
		asked.Add(1)
		var st unix.Statfs_t
		if err := unix.Statfs(path, &st); err != nil {
			return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
		}
		return uint32(st.Type), nil
	})
	defer restore()
	path := tempPath(t, "f")
	for _, tc := range []struct {
		mode  Mode
		asked int32
	}{
		{ModeCreate | ModeRdWr, 2}, // the new file, then its directory
		{ModeRdWr, 1},
	} {
		asked.Store(0)
		world(t, 4, func(c comm.Comm) error {
			f, err := Open(c, path, tc.mode, OpenOptions{})
			if err != nil {
				return err
			}
			return f.Close()
		})
		require.Equal(t, tc.asked, asked.Load(), "statfs calls of an open on 4 ranks, mode %v", tc.mode)
	}
}

// p2pWorld is an in-memory communicator that offers the point-to-point
// gather of MPI communicators (mpi.Comm.AllgatherP2P), counting its calls,
// and passes it on to its duplicates.
type p2pWorld struct {
	comm.Comm
	calls *atomic.Int64
}

func (c p2pWorld) Dup() (comm.Comm, error) {
	d, err := c.Comm.Dup()
	if err != nil {
		return nil, err
	}
	return p2pWorld{d, c.calls}, nil
}

func (c p2pWorld) AllgatherP2P(send, recv []byte, _ time.Duration) (bool, error) {
	c.calls.Add(1)
	return true, c.Comm.Allgather(send, recv)
}

// A file whose ranks span several nodes agrees through the point-to-point
// gather; on one node it does not.
func TestAgreementsAcrossNodesGatherPointToPoint(t *testing.T) {
	for _, tc := range []struct {
		nodeSize string
		p2p      bool
	}{{"1", true}, {"4", false}} {
		var calls atomic.Int64
		path := tempPath(t, "p2p"+tc.nodeSize)
		world(t, 4, func(c comm.Comm) error {
			f, err := Open(p2pWorld{c, &calls}, path, ModeCreate|ModeRdWr, OpenOptions{Hints: map[string]string{"collio_node_size": tc.nodeSize}})
			if err != nil {
				return err
			}
			if err := f.SetView(DefaultView(), nil); err != nil {
				return err
			}
			return f.Close()
		})
		if tc.p2p {
			require.Positive(t, calls.Load(), "collio_node_size=%s: 4 nodes", tc.nodeSize)
		} else {
			require.Zero(t, calls.Load(), "collio_node_size=%s: one node", tc.nodeSize)
		}
	}
}
