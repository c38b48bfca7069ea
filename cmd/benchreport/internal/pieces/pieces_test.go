package pieces

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The golden file is the former Python's (scripts/pieces.sh) on the same
// records (two launches each of individual and collio, one failed romio321
// launch), but for the failed variant's missing figures: empty cells and
// no ratio where Python printed nan.
func TestReport(t *testing.T) {
	f, err := os.Open("testdata/pieces.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if err := Report(&b, f); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("testdata/report.golden.md")
	w := strings.Replace(string(want), "| nan | nan | nan | nan |", "|  |  |  | — |", 1)
	if b.String() != w {
		t.Errorf("got\n%s\nwant\n%s", b.String(), w)
	}
}
