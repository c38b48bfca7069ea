package xfergen

import (
	"regexp"
	"strings"
	"testing"
)

// Every function is defined once, and every line fits the C files' width.
func TestSource(t *testing.T) {
	src := string(Source())
	names := regexp.MustCompile(`(?m)^int (MPI_File_\w+)\(`).FindAllStringSubmatch(src, -1)
	if len(names) != Count() || Count() != 34 {
		t.Fatalf("%d functions defined, Count() = %d; want 34 (mpi.h's reads and writes)", len(names), Count())
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n[1]] {
			t.Errorf("%s defined twice", n[1])
		}
		seen[n[1]] = true
	}
	for i, l := range strings.Split(src, "\n") {
		if columns(l) > width {
			t.Errorf("line %d is %d columns wide: %s", i+1, columns(l), l)
		}
	}
}
