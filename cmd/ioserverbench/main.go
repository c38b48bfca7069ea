//go:build cgo

// Command ioserverbench measures what dedicated I/O server ranks save a
// checkpointing application: N write phases with compute in between, on
// the same compute ranks, written three ways: handed to I/O servers
// (collio.SplitIOServers), with two-phase collective I/O, and through the
// E10 node-local cache. It reports the time the application waited in
// I/O calls (open, the writes, close), the total time to solution, and the
// servers' Compactor counts.
//
//	mpirun -np 4 ioserverbench -dir /scratch/tmp -phases 4 -block 8m -compute 500ms
//
// The global file is on the sim driver (an emulated striped file system:
// -sim-bw per target); the E10 cache on -cache-dir. -pattern rewrite
// makes every phase rewrite the same bytes, half a block shifted from the
// last, so the servers' queues morph superseded bytes away.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/collio/collio"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/comm"
)

func init() { runtime.LockOSThread() }

type config struct {
	dir, cacheDir, pattern, simBW, buffer, out string
	phases, servers                            int
	block                                      int64
	compute                                    time.Duration
	modes                                      []string
}

// result is one mode's figures, each the slowest compute rank's.
type result struct {
	mode                    string
	wait, total             float64 // seconds
	merged, morphed, stolen int64
}

func main() { os.Exit(run()) }

func run() int {
	var cfg config
	var modes, block string
	fs := flag.NewFlagSet("ioserverbench", flag.ContinueOnError)
	fs.StringVar(&cfg.dir, "dir", os.TempDir(), "directory of the files (through the sim driver)")
	fs.StringVar(&cfg.cacheDir, "cache-dir", "/dev/shm", "the E10 cache's node-local directory")
	fs.IntVar(&cfg.phases, "phases", 4, "write phases")
	fs.StringVar(&block, "block", "8m", "bytes each compute rank writes per phase")
	fs.DurationVar(&cfg.compute, "compute", 500*time.Millisecond, "compute time between phases")
	fs.IntVar(&cfg.servers, "servers", 1, "I/O server ranks (the other modes leave as many ranks idle, so every mode computes on the same ranks)")
	fs.StringVar(&cfg.buffer, "buffer", "64m", "collio_io_server_buffer")
	fs.StringVar(&cfg.simBW, "sim-bw", "25m", "bandwidth of each of the sim driver's 4 targets")
	fs.StringVar(&cfg.pattern, "pattern", "checkpoint", "checkpoint: each phase writes new bytes; rewrite: each phase rewrites the last one's bytes, shifted by half a block")
	fs.StringVar(&modes, "modes", "servers,twophase,e10", "modes to run, in order")
	fs.StringVar(&cfg.out, "md", "", "also write the table to this markdown file")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	n, err := hints.ParseSize(block)
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "ioserverbench: -block %q: want a size such as 8m\n", block)
		return 2
	}
	cfg.block = n
	cfg.modes = strings.Split(modes, ",")
	for _, m := range cfg.modes {
		if m != "servers" && m != "twophase" && m != "e10" {
			fmt.Fprintf(os.Stderr, "ioserverbench: -modes: unknown mode %q (servers, twophase, e10)\n", m)
			return 2
		}
	}
	if cfg.pattern != "checkpoint" && cfg.pattern != "rewrite" {
		fmt.Fprintf(os.Stderr, "ioserverbench: -pattern %q: checkpoint or rewrite\n", cfg.pattern)
		return 2
	}
	world, err := collio.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ioserverbench:", err)
		return 1
	}
	defer collio.Finalize()
	if cfg.servers < 1 || cfg.servers >= world.Size() {
		if world.Rank() == 0 {
			fmt.Fprintf(os.Stderr, "ioserverbench: -servers %d: need 1 to %d with %d ranks\n", cfg.servers, world.Size()-1, world.Size())
		}
		return 2
	}
	var results []result
	for _, m := range cfg.modes {
		r, err := runMode(world, cfg, m)
		// Every rank learns whether any failed, idle and server ranks too.
		bad := []int64{0}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ioserverbench: rank %d: %s: %v\n", world.Rank(), m, err)
			bad[0] = 1
		}
		if aerr := world.AllreduceInt64(bad, bad, comm.OpMax); aerr != nil || bad[0] != 0 {
			return 1
		}
		results = append(results, r)
	}
	if world.Rank() == 0 {
		var out bytes.Buffer
		report(&out, cfg, world.Size(), results)
		os.Stdout.Write(out.Bytes())
		if cfg.out != "" {
			if err := os.WriteFile(cfg.out, out.Bytes(), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "ioserverbench:", err)
				return 1
			}
		}
	}
	return 0
}

// runMode runs the phases in one mode. Its result is meaningful on world
// rank 0, which is always a compute rank.
func runMode(world collio.Comm, cfg config, mode string) (result, error) {
	res := result{mode: mode}
	var c collio.Comm
	var err error
	computeRanks := world.Size() - cfg.servers
	if mode == "servers" {
		c, err = collio.SplitIOServers(world, cfg.servers, collio.Hints{"collio_io_server_buffer": cfg.buffer})
	} else {
		color := 0
		if world.Rank() >= computeRanks {
			color = -1
		}
		c, err = world.Split(color, world.Rank())
	}
	if err != nil || c == nil {
		return res, err // a server rank (stopped) or an idle one
	}
	if world.Rank() == 0 && c.Rank() != 0 {
		return res, fmt.Errorf("world rank 0 is compute rank %d, not 0", c.Rank())
	}
	rank := c.Rank() // c may be freed below
	path := filepath.Join(cfg.dir, "ioserverbench-"+mode)
	h := collio.Hints{"collio_sim_bandwidth": cfg.simBW, "striping_factor": "4", "striping_unit": "1m"}
	switch mode {
	case "twophase":
		h["collio_strategy"], h["romio_cb_write"] = "twophase", "enable"
	case "e10":
		h["e10_cache"], h["e10_cache_path"], h["e10_cache_flush_flag"] = "enable", cfg.cacheDir, "flush_immediate"
	}
	wait, total, err := phases(c, cfg, "sim:"+path, h)
	if err == nil && c.Rank() == 0 {
		err = verify(path, cfg, c.Size())
	}
	if mode == "servers" {
		if c.Rank() == 0 && err == nil {
			var st collio.IOServerStats
			st, err = collio.IOServerCounts(c)
			res.merged, res.morphed, res.stolen = st.Merged, st.Morphed, st.Stolen
		}
		if serr := collio.StopIOServers(c); err == nil {
			err = serr
		}
	} else {
		c.Free()
	}
	if rank == 0 {
		collio.Delete("sim:" + path)
	}
	res.wait, res.total = wait, total
	return res, err
}

// phases opens the file, writes cfg.phases phases with compute in
// between, and closes it; it returns the slowest rank's time in I/O calls
// and its total time.
func phases(c collio.Comm, cfg config, path string, h collio.Hints) (wait, total float64, err error) {
	if err := c.Barrier(); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	var io time.Duration
	t := time.Now()
	f, err := collio.Open(c, path, collio.ModeCreate|collio.ModeWrOnly, h)
	if err != nil {
		return 0, 0, err
	}
	io += time.Since(t)
	for k := range cfg.phases {
		data := fill(cfg.block, c.Rank(), k)
		t = time.Now()
		if _, err := f.WriteAtAll(data, offset(cfg, c.Rank(), c.Size(), k)); err != nil {
			f.Close()
			return 0, 0, err
		}
		io += time.Since(t)
		if k < cfg.phases-1 {
			time.Sleep(cfg.compute)
		}
	}
	t = time.Now()
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	io += time.Since(t)
	v := []int64{int64(io), int64(time.Since(start))}
	if err := c.AllreduceInt64(v, v, comm.OpMax); err != nil {
		return 0, 0, err
	}
	return time.Duration(v[0]).Seconds(), time.Duration(v[1]).Seconds(), nil
}

// offset is where rank writes phase k: a new block per phase, or (rewrite)
// its own block again, shifted by half a block every other phase.
func offset(cfg config, rank, size, k int) int64 {
	if cfg.pattern == "rewrite" {
		return int64(rank)*cfg.block*2 + int64(k%2)*cfg.block/2
	}
	return (int64(k)*int64(size) + int64(rank)) * cfg.block
}

func fill(n int64, rank, k int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rank*31 + k*17 + i*7 + i/251 + 1)
	}
	return b
}

// verify compares the file with what the phases wrote, in order.
func verify(path string, cfg config, size int) error {
	var want []byte
	put := func(off int64, p []byte) {
		for int64(len(want)) < off+int64(len(p)) {
			want = append(want, 0)
		}
		copy(want[off:], p)
	}
	for k := range cfg.phases {
		for r := range size {
			put(offset(cfg, r, size, k), fill(cfg.block, r, k))
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s differs from the data written (%d bytes, want %d)", path, len(got), len(want))
	}
	return nil
}

func report(w io.Writer, cfg config, np int, results []result) {
	fmt.Fprintf(w, "ioserverbench: %d ranks (%d compute, %d I/O server or idle), %d phases of %d MiB per compute rank, %v compute between, pattern %s,\n",
		np, np-cfg.servers, cfg.servers, cfg.phases, cfg.block>>20, cfg.compute, cfg.pattern)
	fmt.Fprintf(w, "sim driver 4 targets x %s/s, server buffer %s, E10 cache in %s.\n\n", cfg.simBW, cfg.buffer, cfg.cacheDir)
	var base *result
	for i := range results {
		if results[i].mode == "twophase" {
			base = &results[i]
		}
	}
	fmt.Fprintln(w, "| mode | application waited (s) | total time (s) | wait: two-phase / this | merged | morphed (bytes) | reads stolen |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		ratio := "—"
		if base != nil && r.wait > 0 {
			ratio = fmt.Sprintf("%.1f", base.wait/r.wait)
		}
		counts := "— | — | —"
		if r.mode == "servers" {
			counts = fmt.Sprintf("%d | %d | %d", r.merged, r.morphed, r.stolen)
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %s | %s |\n", r.mode, r.wait, r.total, ratio, counts)
	}
}
