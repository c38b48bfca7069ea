//go:build cgo

package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/collio/collio/internal/ioerr"
)

func TestWithContext(t *testing.T) {
	err := withContext(checkDisp(-1, false), "set_view", "/d/f.dat", 2)
	want := "collio: set_view /d/f.dat (rank 2): invalid displacement -1: must be >= 0 or MPI_DISPLACEMENT_CURRENT"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	// Context already there is kept.
	if got := withContext(err, "other", "/x", 5).Error(); got != want {
		t.Errorf("context replaced: %q", got)
	}
	if checkDisp(0, false) != nil || checkDisp(1<<40, true) != nil {
		t.Error("a displacement >= 0 is refused")
	}
	ie := ioerr.New(ioerr.ErrArg, "", "offset -1 is negative")
	if got := withContext(ie, "write_at", "/d/f", 0).Error(); got != "collio: write_at /d/f (rank 0): invalid argument: offset -1 is negative" {
		t.Errorf("ioerr.Error with context: %q", got)
	}
	if withContext(nil, "x", "y", 0) != nil {
		t.Error("nil gained context")
	}
}

func TestShortMessage(t *testing.T) {
	const max = 255
	short := ioerr.New(ioerr.ErrIO, "write_at", "disk on fire")
	if got := shortMessage(short, short.Error(), max); got != short.Error() {
		t.Errorf("a short message changed: %q", got)
	}

	// A long path keeps its last 40 bytes.
	path := "/" + strings.Repeat("directory/", 30) + "file.dat"
	e := &ioerr.Error{Class: ioerr.ErrNoSpace, Op: "close", Path: path, Rank: 3, Msg: "an earlier call failed on " + path}
	got := shortMessage(e, e.Error(), max)
	if len(got) > max || !strings.HasPrefix(got, "collio: close ...") || !strings.Contains(got, path[len(path)-40:]+" (rank 3)") ||
		!strings.HasSuffix(got, "failed on ..."+path[len(path)-40:]) {
		t.Errorf("long path: %q (%d bytes)", got, len(got))
	}

	// A long message loses its end, not inside a UTF-8 sequence.
	c := withContext(errCode(0, "%s", strings.Repeat("é", 300)), "set_view", "/f", 0)
	got = shortMessage(c, c.Error(), max)
	if len(got) > max || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) ||
		!strings.HasPrefix(got, "collio: set_view /f (rank 0): éé") {
		t.Errorf("long message: %q (%d bytes)", got, len(got))
	}
}

func TestOpName(t *testing.T) {
	for op, want := range map[int]string{
		0: "write_at", 1 | 8: "read_at_all", 2: "write", 3 | 8 | 16: "read_all_begin", 4: "write_shared", 5 | 8: "read_ordered",
	} {
		if got := opName(op); got != want {
			t.Errorf("opName(%d) = %q, want %q", op, got, want)
		}
	}
}
