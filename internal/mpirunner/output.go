//go:build cgo

package mpirunner

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// rankLog is where a rank other than 0 writes its stdout and stderr, so
// that the terminal shows one copy of the test output (rank 0's). The log
// is replayed, prefixed "[rank N] ", only when this rank has something to
// add: a failure of its own.
type rankLog struct {
	mu   sync.Mutex
	rank int
	file *os.File // the log (fds 1 and 2 point to it)
	term *os.File // the original stderr, for replays
	// replayed makes replay happen once, whichever of the end of the run
	// or an abort gets there first.
	replayed bool
}

// rankOut is nil on rank 0 and in singleton runs.
var rankOut *rankLog

// redirectOutput points fds 1 and 2 of this process to a fresh temp file.
func redirectOutput(rank int) (*rankLog, error) {
	f, err := os.CreateTemp("", fmt.Sprintf("mpirunner-rank%d-*.log", rank))
	if err != nil {
		return nil, fmt.Errorf("mpirunner: creating the rank %d log: %w", rank, err)
	}
	// Unlink at once: the open descriptor keeps the file while we need it
	// and nothing is left behind when the rank dies.
	os.Remove(f.Name())
	saved, err := unix.Dup(2)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mpirunner: saving stderr: %w", err)
	}
	for _, fd := range []int{1, 2} {
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			f.Close()
			unix.Close(saved)
			return nil, fmt.Errorf("mpirunner: redirecting fd %d to the rank log: %w", fd, err)
		}
	}
	term := os.NewFile(uintptr(saved), "stderr")
	// A crash (an unrecovered panic, -test.timeout's goroutine dump) ends
	// the process before any replay; let it reach the terminal too.
	if err := debug.SetCrashOutput(term, debug.CrashOptions{}); err != nil {
		fmt.Fprintf(term, "mpirunner: rank %d: crash output stays in the rank log: %v\n", rank, err)
	}
	return &rankLog{rank: rank, file: f, term: term}, nil
}

// offset is the current end of the log.
func (l *rankLog) offset() int64 {
	st, err := l.file.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// firstMessageSince returns the first message written after off, on one
// line: the first line that is not test-runner bookkeeping ("=== RUN" and
// the like) plus its more indented continuation lines, without testify's
// "Error Trace"/"Test:" noise or a panic's stack. Ranks other than 0 run in -test.v mode,
// which streams t.Errorf output as it happens, so the message is there
// before the test ends.
func (l *rankLog) firstMessageSince(off int64) string {
	return firstMessage(io.NewSectionReader(l.file, off, l.offset()-off))
}

func firstMessage(r io.Reader) string {
	var parts []string
	indent := -1
	inTrace := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		depth := len(raw) - len(strings.TrimLeft(raw, " \t"))
		if indent < 0 {
			if line == "" || strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- ") {
				continue
			}
			indent = depth
			parts = append(parts, line)
			continue
		}
		if line == "" {
			continue
		}
		if depth <= indent || strings.HasPrefix(line, "goroutine ") {
			break // the next message, or a panic's stack dump
		}
		switch {
		case strings.HasPrefix(line, "Error Trace:"):
			inTrace = true
			continue
		case inTrace && strings.HasPrefix(line, "/"):
			continue
		case strings.HasPrefix(line, "Test:"):
			inTrace = false
			continue
		}
		inTrace = false
		parts = append(parts, strings.Join(strings.Fields(line), " "))
	}
	return strings.Join(parts, " ")
}

// replay copies the log to the original stderr, each line prefixed with
// the rank, keeping only what explains failures (see failureLines). It
// also serves replays of several ranks' identical logs: note, if not
// empty, is printed after the lines.
func (l *rankLog) replay() { l.replayLines(l.failureText(), "") }

// failureText is the part of the log that replay prints.
func (l *rankLog) failureText() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := io.ReadAll(io.NewSectionReader(l.file, 0, l.offset()))
	if err != nil {
		return []string{fmt.Sprintf("mpirunner: reading the rank log: %v", err)}
	}
	return failureLines(data)
}

func (l *rankLog) replayLines(lines []string, note string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.replayed {
		return
	}
	l.replayed = true
	if note != "" {
		lines = append(lines, note)
	}
	var b bytes.Buffer
	for _, line := range lines {
		fmt.Fprintf(&b, "[rank %d] %s\n", l.rank, line)
	}
	l.term.Write(b.Bytes())
}

// digest identifies a replay's text, so that ranks that failed in the
// same way print it once.
func digest(lines []string) uint64 {
	h := fnv.New64a()
	for _, line := range lines {
		h.Write([]byte(line))
		h.Write([]byte{'\n'})
	}
	return h.Sum64() | 1 // never 0, which means "nothing to replay"
}

// failureLines drops the parts of a -test.v log that belong to passing or
// skipped top-level tests and the "=== RUN"-style lines, keeping failing
// tests' output and anything printed outside tests (panics, exit notes).
func failureLines(log []byte) []string {
	var kept, pending []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== "):
		case strings.HasPrefix(line, "--- PASS") || strings.HasPrefix(line, "--- SKIP"):
			pending = pending[:0]
		case strings.HasPrefix(line, "--- FAIL"):
			kept = append(append(kept, pending...), line)
			pending = pending[:0]
		case line == "PASS" || line == "FAIL":
		default:
			pending = append(pending, line)
		}
	}
	return append(kept, pending...)
}
