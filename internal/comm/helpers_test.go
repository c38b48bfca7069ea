package comm

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Tests run rank code through RunWorldTimeout so that a bug shows up as a
// failure naming the blocked ranks instead of a hung test binary.
const testTimeout = 20 * time.Second

func runRanks(t *testing.T, n, nodeSize int, fn func(c Comm) error) {
	t.Helper()
	if err := RunWorldTimeout(n, nodeSize, testTimeout, fn); err != nil {
		t.Fatalf("n=%d nodeSize=%d: %v", n, nodeSize, err)
	}
}

func sameBytes(what string, got, want []byte) error {
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

// errIs returns nil if err wraps target, else an error saying what came.
func errIs(what string, err, target error) error {
	if !errors.Is(err, target) {
		return fmt.Errorf("%s: got error %v, want one wrapping %v", what, err, target)
	}
	return nil
}

// pattern is a recognisable byte for (from, to, index).
func pattern(from, to, i int) byte { return byte(from*31 + to*7 + i*3 + 1) }

var testSizes = []struct{ n, nodeSize int }{
	{1, 0}, {2, 1}, {3, 2}, {7, 3}, {7, 0}, {64, 5}, {64, 16},
}
