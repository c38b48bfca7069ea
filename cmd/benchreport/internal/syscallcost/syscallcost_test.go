package syscallcost

import (
	"bytes"
	"os"
	"testing"
)

// The golden output is the former Python's (scripts/syscallcost.sh) on
// the same launches (np 2, three repetitions each).
func TestReport(t *testing.T) {
	var b bytes.Buffer
	if err := Report(&b, "testdata", 2, []string{"go", "c"}); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("testdata/report.golden")
	if b.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := Report(&b, "testdata", 2, []string{"raw"}); err == nil {
		t.Error("a mode without launches: no error")
	}
}
