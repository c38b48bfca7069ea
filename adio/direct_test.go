package adio

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// noDirect is ufs seen through a wrapper that hides it: a driver without
// direct I/O.
type noDirect struct{ driver.Driver }

func (noDirect) Name() string { return "nodirect" }

func (d noDirect) Open(path string, opts driver.OpenOptions) (driver.File, error) {
	f, err := d.Driver.Open(path, opts)
	if err != nil {
		return nil, err
	}
	return hidden{f}, nil
}

type hidden struct{ driver.File }

func init() {
	ufs, _ := driver.ByName("ufs")
	driver.Register(noDirect{ufs})
}

// directTempDir is a directory on /var/tmp (ext4 on the test machines),
// skipped where O_DIRECT is refused there.
func directTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "collio-direct-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	if err != nil {
		t.Skipf("/var/tmp refuses O_DIRECT: %v", err)
	}
	f.Close()
	return dir
}

// dpiece is one rank's piece of the file.
type dpiece struct {
	off, n int64
	rank   int
}

// randomSegments cuts [0, size) into pieces of random, mostly unaligned
// lengths (some whole pages, some a few bytes) and deals them to ranks.
func randomSegments(rng *rand.Rand, size int64, ranks int) []dpiece {
	var segs []dpiece
	for off := int64(0); off < size; {
		var n int64
		switch rng.IntN(4) {
		case 0:
			n = int64(1+rng.IntN(4)) * 4096
		case 1:
			n = 1 + rng.Int64N(100)
		default:
			n = 1 + rng.Int64N(20000)
		}
		n = min(n, size-off)
		segs = append(segs, dpiece{off: off, n: n, rank: rng.IntN(ranks)})
		off += n
	}
	return segs
}

// viewOf is rank r's view over its segments, and its data in file order.
func viewOf(segs []dpiece, r int, fill []byte) (View, []byte, error) {
	var lens []int
	var offs []int64
	var data []byte
	for _, s := range segs {
		if s.rank == r {
			lens = append(lens, int(s.n))
			offs = append(offs, s.off)
			data = append(data, fill[s.off:s.off+s.n]...)
		}
	}
	if len(lens) == 0 {
		return DefaultView(), nil, nil
	}
	ft, err := layout.HIndexed(lens, offs, layout.Byte)
	if err != nil {
		return View{}, nil, err
	}
	return View{Etype: layout.Byte, Filetype: ft}, data, nil
}

// directSeed varies the random pieces (COLLIO_DIRECT_SEED).
var directSeed = func() uint64 {
	var s uint64 = 7
	fmt.Sscan(os.Getenv("COLLIO_DIRECT_SEED"), &s)
	return s
}()

// Several ranks write random aligned and unaligned pieces of one file with
// direct_write (and direct_read) on ext4, through independent writes of
// each piece, independent writes through views (with and without data
// sieving), every collective strategy and the E10 cache (whose copies
// write the global file); the file equals the reference byte for byte,
// reading back through collio gives each rank's data, and every rank's
// file still does direct I/O at the end.
func TestDirectWritesMatchReference(t *testing.T) {
	dir := directTempDir(t)
	const size = 1<<20 + 12345
	for i, tc := range []struct {
		ranks int
		how   string // "pieces": WriteAt per piece; "view": WriteAt through the view; else WriteAtAll with that strategy
		hints map[string]string
	}{
		{3, "pieces", nil},
		{4, "pieces", map[string]string{hints.DirectRead: "false"}},
		{3, "view", map[string]string{"romio_ds_write": "enable", "ind_wr_buffer_size": "65536"}},
		{3, "view", map[string]string{"romio_ds_write": "disable"}},
		{4, "auto", nil},
		{3, "twophase", map[string]string{"cb_buffer_size": "100000"}},
		{4, "twophase", map[string]string{"romio_ds_write": "disable", "collio_file_domains": "even"}},
		{3, "dynamic", map[string]string{"cb_buffer_size": "65536"}},
		{4, "tam", map[string]string{"collio_node_size": "2"}},
		{3, "independent", nil},
		{3, "twophase", map[string]string{"e10_cache": "enable", "e10_cache_flush_flag": "flush_onclose"}},
	} {
		t.Run(fmt.Sprintf("%d-%s", i, tc.how), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), directSeed))
			fill := make([]byte, size)
			for k := range fill {
				fill[k] = byte(rng.IntN(255) + 1) // no zeros: a lost piece shows
			}
			segs := randomSegments(rng, size, tc.ranks)
			var direct atomic.Int64
			path := filepath.Join(dir, fmt.Sprintf("f%d", i))
			world(t, tc.ranks, func(c comm.Comm) error {
				h := map[string]string{hints.DirectWrite: "true", hints.DirectRead: "true", "cb_config_list": "*:*", "e10_cache_path": filepath.Join(dir, "cache")}
				if tc.how != "pieces" && tc.how != "view" {
					h["collio_strategy"] = tc.how
				}
				for k, v := range tc.hints {
					h[k] = v
				}
				f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h})
				if err != nil {
					return err
				}
				defer f.Close()
				if !f.Hints().Bool(hints.DirectWrite) || len(f.Hints().Warnings()) > 0 {
					return fmt.Errorf("direct_write not in effect: %v", f.Hints().Warnings())
				}
				r := c.Rank()
				v, data, err := viewOf(segs, r, fill)
				if err != nil {
					return err
				}
				switch tc.how {
				case "pieces":
					for _, s := range segs {
						if s.rank != r {
							continue
						}
						if n, err := f.WriteAt(Bytes(fill[s.off:s.off+s.n]), s.off); err != nil || n != s.n {
							return fmt.Errorf("write %d at %d: %d, %v", s.n, s.off, n, err)
						}
					}
				case "view":
					if err := f.SetView(v, nil); err != nil {
						return err
					}
					if n, err := f.WriteAt(Bytes(data), 0); err != nil || n != int64(len(data)) {
						return fmt.Errorf("write: %d, %v", n, err)
					}
				default:
					if err := f.SetView(v, nil); err != nil {
						return err
					}
					if n, err := f.WriteAtAll(Bytes(data), 0); err != nil || n != int64(len(data)) {
						return fmt.Errorf("write_at_all: %d, %v", n, err)
					}
				}
				if err := f.Sync(); err != nil {
					return err
				}
				if err := f.SetView(v, nil); err != nil {
					return err
				}
				back := make([]byte, len(data))
				if n, err := f.ReadAtAll(Bytes(back), 0); err != nil || n != int64(len(data)) {
					return fmt.Errorf("read_at_all: %d, %v", n, err)
				}
				if !bytes.Equal(back, data) {
					return fmt.Errorf("rank %d read back other bytes than it wrote", r)
				}
				st, ok := driver.DirectOf(f.f)
				if !ok || st.Err != nil || !st.Write {
					return fmt.Errorf("the file stopped doing direct writes: %+v", st)
				}
				direct.Add(st.Bytes)
				return nil
			})
			require.Positive(t, direct.Load(), "no byte went through O_DIRECT")
			got := readFile(t, path)
			require.Equal(t, len(fill), len(got))
			if !bytes.Equal(fill, got) {
				for k := range got {
					if got[k] != fill[k] {
						t.Fatalf("file differs from the reference first at byte %d", k)
					}
				}
			}
		})
	}
}

// tmpfs (/dev/shm): kernels from 6.6 take O_DIRECT there and the hints
// stay in effect; older ones refuse it at open, and then the open still
// succeeds, the hints read back false and rank 0 alone warns, once. The
// data is right either way.
func TestDirectTmpfs(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "collio-direct-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	probe, perr := os.OpenFile(filepath.Join(dir, "probe"), os.O_RDWR|os.O_CREATE|unix.O_DIRECT, 0o644)
	if perr == nil {
		probe.Close()
	}
	path := filepath.Join(dir, "f")
	warnings := checkDirectOpen(t, path, perr == nil)
	if perr == nil {
		require.Zero(t, warnings)
		t.Log("tmpfs takes O_DIRECT on this kernel: direct_read and direct_write stay in effect")
	} else {
		require.Equal(t, 1, warnings)
		t.Logf("tmpfs refuses O_DIRECT on this kernel (%v): the hints fall back with one warning", perr)
	}
}

// A driver without direct I/O: the open succeeds, the hints read back
// false, rank 0 warns once, naming both hints and the reason.
func TestDirectFallbackWarnsOnce(t *testing.T) {
	path := "nodirect:" + tempPath(t, "f")
	require.Equal(t, 1, checkDirectOpen(t, path, false))
}

// checkDirectOpen opens path on 3 ranks with direct_read and direct_write,
// checks the effective hints (in effect or not), writes and reads back
// unaligned pieces, and returns how many O_DIRECT warnings were printed.
func checkDirectOpen(t *testing.T, path string, inEffect bool) int {
	t.Helper()
	var mu sync.Mutex
	var stderr bytes.Buffer
	const n, piece = 3, 5000
	world(t, n, func(c comm.Comm) error {
		h := map[string]string{hints.DirectWrite: "true", hints.DirectRead: "true"}
		f, err := Open(c, path, ModeCreate|ModeRdWr, OpenOptions{Hints: h, Stderr: lockedWriter{&mu, &stderr}})
		if err != nil {
			return err
		}
		defer f.Close()
		for _, k := range []string{hints.DirectRead, hints.DirectWrite} {
			if f.Hints().Bool(k) != inEffect {
				return fmt.Errorf("%s reads back %v", k, f.Hints().Bool(k))
			}
		}
		data := rankData(c.Rank(), piece)
		if _, err := f.WriteAtAll(Bytes(data), int64(c.Rank())*piece+3); err != nil {
			return err
		}
		back := make([]byte, piece)
		if _, err := f.ReadAtAll(Bytes(back), int64(c.Rank())*piece+3); err != nil {
			return err
		}
		if !bytes.Equal(back, data) {
			return fmt.Errorf("rank %d read back other bytes", c.Rank())
		}
		return nil
	})
	mu.Lock()
	out := stderr.String()
	mu.Unlock()
	if !inEffect {
		require.Contains(t, out, "direct_read, direct_write: O_DIRECT cannot be used for "+path)
	}
	return strings.Count(out, "O_DIRECT")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
