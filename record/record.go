// Package record writes and reads the access record of collective writes
// (COLLIO_RECORD=dir): per file and rank, one entry per collective call
// with the view (displacement and filetype), the call's first data byte and
// its size. A filetype is kept as runs of equal blocks at a fixed stride,
// so a subarray costs one run per row of rows, never one entry per element.
// collio place reads the record to build the application matrix.
package record

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/collio/collio/layout"
)

// Run is Count blocks of Len bytes at Off, Off+Stride, ...
type Run struct{ Off, Len, Stride, Count int64 }

// Call is one rank's side of one collective call.
type Call struct {
	Seq         int64 // the call's number on this file in the run (1 = first)
	Op          string
	Rank, Ranks int
	// The view: the filetype (LB, Extent and its blocks as Runs) tiled
	// from Disp.
	Disp, LB, Extent int64
	Runs             []Run
	// Start is the call's first data byte in the view's stream, Bytes its
	// size.
	Start, Bytes int64
}

// Runs compresses t's blocks into runs.
func Runs(t *layout.Type) []Run {
	var runs []Run
	for off, n := range t.Blocks() {
		if k := len(runs) - 1; k >= 0 {
			r := &runs[k]
			switch {
			case r.Count == 1 && r.Len == n && off > r.Off:
				r.Stride, r.Count = off-r.Off, 2
				continue
			case r.Count > 1 && r.Len == n && off == r.Off+r.Count*r.Stride:
				r.Count++
				continue
			}
		}
		runs = append(runs, Run{Off: off, Len: n, Count: 1})
	}
	return runs
}

// Filetype rebuilds the call's filetype from its runs.
func (c Call) Filetype() (*layout.Type, error) {
	if len(c.Runs) == 0 {
		return layout.Resized(layout.Bytes(0), c.LB, c.Extent)
	}
	lens := make([]int, len(c.Runs))
	displs := make([]int64, len(c.Runs))
	types := make([]*layout.Type, len(c.Runs))
	for i, r := range c.Runs {
		if r.Len < 1 || r.Count < 1 {
			return nil, fmt.Errorf("record: run %d has %d blocks of %d bytes", i, r.Count, r.Len)
		}
		t, err := layout.HVector(int(r.Count), 1, r.Stride, layout.Bytes(r.Len))
		if err != nil {
			return nil, fmt.Errorf("record: run %d: %w", i, err)
		}
		lens[i], displs[i], types[i] = 1, r.Off, t
	}
	t, err := layout.Struct(lens, displs, types)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return layout.Resized(t, c.LB, c.Extent)
}

// Writer appends one rank's calls on one file to its record.
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	name string
}

// recorded counts the calls this process recorded in each record file, so
// that a file opened again (written, then read back) adds to its record
// and numbers its calls on.
var (
	mu       sync.Mutex
	recorded = map[string]int64{}
)

// FileName is the record of rank's calls on the file at path: the path's
// base name, made safe, and the rank.
func FileName(path string, rank int) string {
	return fmt.Sprintf("%s.rank%d.rec", safe(filepath.Base(path)), rank)
}

func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// Create starts rank's record of the file at path in dir: a new record
// (replacing one left by an earlier run) the first time this process
// opens it, the same record continued after that.
func Create(dir, path string, rank int) (*Writer, error) {
	name := filepath.Join(dir, FileName(path, rank))
	mu.Lock()
	_, again := recorded[name]
	mu.Unlock()
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if again {
		flags = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriter(f), name: name}
	if !again {
		fmt.Fprintf(w.w, "collio-record 1 %s\n", strconv.Quote(path))
		mu.Lock()
		recorded[name] = 0
		mu.Unlock()
	}
	return w, nil
}

// Write appends c, numbered after the calls recorded before it (c.Seq is
// ignored).
func (w *Writer) Write(c Call) error {
	mu.Lock()
	recorded[w.name]++
	c.Seq = recorded[w.name]
	mu.Unlock()
	fmt.Fprintf(w.w, "call %d %s rank %d of %d disp %d lb %d extent %d start %d bytes %d runs %d\n",
		c.Seq, c.Op, c.Rank, c.Ranks, c.Disp, c.LB, c.Extent, c.Start, c.Bytes, len(c.Runs))
	for _, r := range c.Runs {
		fmt.Fprintf(w.w, "%d %d %d %d\n", r.Off, r.Len, r.Stride, r.Count)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// Close ends the record.
func (w *Writer) Close() error {
	err := w.w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// Parse reads one rank's record.
func Parse(r io.Reader, name string) (path string, calls []Call, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("record %s line %d: %s", name, line, fmt.Sprintf(format, a...))
	}
	next := func() (string, bool) {
		ok := sc.Scan()
		line++
		return sc.Text(), ok
	}
	head, ok := next()
	if !ok {
		return "", nil, bad("empty, not a collio record")
	}
	if !strings.HasPrefix(head, "collio-record 1 ") {
		return "", nil, bad("not a collio record (want %q)", "collio-record 1 PATH")
	}
	if path, err = strconv.Unquote(strings.TrimPrefix(head, "collio-record 1 ")); err != nil {
		return "", nil, bad("bad path: %v", err)
	}
	for {
		text, ok := next()
		if !ok {
			break
		}
		var c Call
		var nruns int
		if _, err := fmt.Sscanf(text, "call %d %s rank %d of %d disp %d lb %d extent %d start %d bytes %d runs %d",
			&c.Seq, &c.Op, &c.Rank, &c.Ranks, &c.Disp, &c.LB, &c.Extent, &c.Start, &c.Bytes, &nruns); err != nil {
			return "", nil, bad("want a call line: %v", err)
		}
		if nruns < 0 {
			return "", nil, bad("%d runs", nruns)
		}
		for range nruns {
			text, ok := next()
			if !ok {
				return "", nil, bad("ends inside call %d (%d runs announced)", c.Seq, nruns)
			}
			var r Run
			if _, err := fmt.Sscanf(text, "%d %d %d %d", &r.Off, &r.Len, &r.Stride, &r.Count); err != nil {
				return "", nil, bad("want a run (offset length stride count): %v", err)
			}
			c.Runs = append(c.Runs, r)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return "", nil, bad("%v", err)
	}
	return path, calls, nil
}

// Files lists the recorded files in dir: base name (as in FileName) to
// the number of rank records.
func Files(dir string) (map[string]int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.rank*.rec"))
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	files := map[string]int{}
	for _, n := range names {
		b := filepath.Base(n)
		files[b[:strings.LastIndex(b, ".rank")]]++
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("record: no records (*.rank*.rec) in %s", dir)
	}
	return files, nil
}

// ReadCall reads call seq of the file recorded as base in dir, from every
// rank: calls[r] is rank r's side.
func ReadCall(dir, base string, seq int64) ([]Call, error) {
	files, err := Files(dir)
	if err != nil {
		return nil, err
	}
	n, ok := files[base]
	if !ok {
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("record: no record of %q in %s (recorded: %s)", base, dir, strings.Join(names, ", "))
	}
	calls := make([]Call, n)
	for r := range n {
		name := filepath.Join(dir, fmt.Sprintf("%s.rank%d.rec", base, r))
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		_, cs, err := Parse(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(cs, func(c Call) bool { return c.Seq == seq })
		if i < 0 {
			return nil, fmt.Errorf("record %s: no call %d (%d calls recorded)", name, seq, len(cs))
		}
		c := cs[i]
		if c.Rank != r || c.Ranks != n {
			return nil, fmt.Errorf("record %s: call %d says rank %d of %d, expected rank %d of %d", name, seq, c.Rank, c.Ranks, r, n)
		}
		calls[r] = c
	}
	return calls, nil
}

// FirstWrite is the number of the first collective write recorded for the
// file base in dir (from rank 0's record).
func FirstWrite(dir, base string) (int64, error) {
	name := filepath.Join(dir, fmt.Sprintf("%s.rank0.rec", base))
	f, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	_, calls, err := Parse(f, name)
	if err != nil {
		return 0, err
	}
	for _, c := range calls {
		if strings.HasPrefix(c.Op, "write") {
			return c.Seq, nil
		}
	}
	return 0, fmt.Errorf("record %s: no collective write among its %d calls", name, len(calls))
}
