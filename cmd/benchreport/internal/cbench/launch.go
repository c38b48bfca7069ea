package cbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/collio/collio/cmd/benchreport/internal/records"
)

// A Probe measures something outside the program around each launch, say
// the bytes the launch put on the network from the links' counters. Its
// columns go into every record, before the log's, and into the report.
type Probe interface {
	Columns() []string
	// Start is called just before a launch, Stop just after it with the
	// launch's figures (column to value).
	Start() error
	Stop() (records.Row, error)
}

// launch runs cmd with its output in log, stdin empty, around the probes,
// and returns the exit code (128+signal when it was killed, 127 when it
// did not start) and the wall time.
func launch(cmd []string, log string, probes []Probe) (rc int, secs float64, figures records.Row, err error) {
	f, err := os.Create(log)
	if err != nil {
		return 0, 0, nil, err
	}
	defer f.Close()
	for _, p := range probes {
		if err := p.Start(); err != nil {
			return 0, 0, nil, fmt.Errorf("probe: %w", err)
		}
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdout, c.Stderr = f, f
	t0 := time.Now()
	err = c.Run()
	secs = time.Since(t0).Seconds()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		rc = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			rc = 128 + int(ws.Signal())
		}
	default:
		fmt.Fprintf(f, "cbench: %v\n", err)
		rc = 127
	}
	figures = records.Row{}
	for _, p := range probes {
		row, err := p.Stop()
		if err != nil {
			return rc, secs, nil, fmt.Errorf("probe: %w", err)
		}
		for k, v := range row {
			figures[k] = v
		}
	}
	return rc, secs, figures, nil
}

// probeColumns is every probe's columns.
func probeColumns(probes []Probe) []string {
	var cols []string
	for _, p := range probes {
		cols = append(cols, p.Columns()...)
	}
	return cols
}

// tail writes the last n lines of the file, indented, to w.
func tail(w io.Writer, path string, n int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var ls []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ls = append(ls, sc.Text())
		if len(ls) > n {
			ls = ls[1:]
		}
	}
	for _, l := range ls {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// logName is the log file of launch seq: 0001-collperf-np2-16k-collio_twophase.log.
func logName(seq int, parts ...string) string {
	name := fmt.Sprintf("%04d-%s.log", seq, strings.Join(parts, "-"))
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("/:+=,", r) {
			return '_'
		}
		return r
	}, name)
}

// removeMatching removes what in dir matches pattern.
func removeMatching(dir, pattern string) {
	names, _ := filepath.Glob(filepath.Join(dir, pattern))
	for _, n := range names {
		os.RemoveAll(n)
	}
}

// sameFiles compares the .nc files of dir against those of ref as cmp
// does: "" when all are equal, else "name:byteN" (N the first differing
// byte, counted from 1), "name:missing" or "name:extra", joined by ";".
func sameFiles(ref, dir string) string {
	var bad []string
	refs, _ := filepath.Glob(filepath.Join(ref, "*.nc"))
	slices.Sort(refs)
	for _, r := range refs {
		name := filepath.Base(r)
		other := filepath.Join(dir, name)
		if !isFile(other) {
			bad = append(bad, name+":missing")
			continue
		}
		if d := firstDifference(r, other); d != "" {
			bad = append(bad, name+":"+d)
		}
	}
	mine, _ := filepath.Glob(filepath.Join(dir, "*.nc"))
	slices.Sort(mine)
	for _, m := range mine {
		if !isFile(filepath.Join(ref, filepath.Base(m))) {
			bad = append(bad, filepath.Base(m)+":extra")
		}
	}
	return strings.Join(bad, ";")
}

// firstDifference is "" for equal files, else "byteN".
func firstDifference(a, b string) string {
	fa, err := os.Open(a)
	if err != nil {
		return "differs"
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return "differs"
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	for n := int64(1); ; n++ {
		x, errx := ra.ReadByte()
		y, erry := rb.ReadByte()
		if errx != nil || erry != nil {
			if errx == io.EOF && erry == io.EOF {
				return ""
			}
			return fmt.Sprintf("byte%d", n)
		}
		if x != y {
			return fmt.Sprintf("byte%d", n)
		}
	}
}
