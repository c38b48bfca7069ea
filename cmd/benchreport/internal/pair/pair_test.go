package pair

import (
	"bytes"
	"os"
	"testing"
)

// The golden outputs are the former Python's (scripts/pair.sh) on the
// same collperf JSON: two pairs of launches, three interleaved launches,
// and a base build's launch.
func TestReport(t *testing.T) {
	for _, dir := range []string{"testdata", "testdata/interleave", "testdata/base"} {
		var b bytes.Buffer
		if err := Report(&b, dir); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(dir + "/report.golden")
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("%s:\n got\n%s\nwant\n%s", dir, b.String(), want)
		}
	}
}
