package progout

import (
	"os"
	"strings"
	"testing"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestResultLine(t *testing.T) {
	r := ResultLine("collperf", read(t, "collperf.out"), 0)
	if r.Status != OK || r.Get("write_MiBs") != "296.1" || r.Get("read_MiBs") != "27.5" || r.Get("write_us") != "-" {
		t.Errorf("collperf: %+v", r)
	}
	r = ResultLine("callcost", read(t, "callcost.out"), 0)
	if r.Status != OK || r.Get("write_MiBs") != "2.2" || r.Get("read_MiBs") != "10.3" ||
		r.Get("write_us") != "55805.37" || r.Get("read_us") != "12108.73" {
		t.Errorf("callcost: %+v", r)
	}
	// The result line of another program is no result.
	if r := ResultLine("callcost", read(t, "collperf.out"), 0); r.Status != NoOutput {
		t.Errorf("callcost on collperf's output: %s", r.Status)
	}
	bad := strings.Replace(string(read(t, "collperf.out")), "verified=yes", "verified=no", 1)
	if r := ResultLine("collperf", []byte(bad), 0); r.Status != WrongData {
		t.Errorf("verified=no: %s", r.Status)
	}
	for rc, want := range map[int]string{1: Failed, 124: Timeout, 137: Timeout} {
		if r := ResultLine("collperf", read(t, "collperf.out"), rc); r.Status != want || r.Get("write_MiBs") != "296.1" {
			t.Errorf("exit %d: %+v, want %s and the figures", rc, r, want)
		}
	}
}

func TestIOR(t *testing.T) {
	out := read(t, "ior.out")
	r := IOR(out, 0)
	// The summary's Max(MiB), not the results table's bw.
	if r.Status != OK || r.Get("write_MiBs") != "145.26" || r.Get("read_MiBs") != "200.19" {
		t.Errorf("ior: %+v", r)
	}
	if r := IOR(out, 1); r.Status != Failed {
		t.Errorf("exit 1: %s", r.Status)
	}
	cut := string(out[:strings.Index(string(out), "Summary of all tests:")])
	if r := IOR([]byte(cut), 0); r.Status != NoOutput || r.Get("write_MiBs") != "-" {
		t.Errorf("no summary: %+v", r)
	}
	withErr := strings.Replace(string(out), "Results: \n", "Results: \nior ERROR: read(76) of file, errno 5, Input/output error\n", 1)
	if r := IOR([]byte(withErr), 0); r.Status != ErrorInOutput {
		t.Errorf("an ERROR line: %s", r.Status)
	}
}

func TestE3SM(t *testing.T) {
	out := read(t, "e3sm-f.out")
	r := ParseE3SM(out, 0)
	want := []E3SMFile{{"h0", "16.16", "0.2837", "0.3176"}, {"h1", "0.34", "0.0034", "0.0049"}}
	if r.Status != OK || len(r.Files) != 2 || r.Files[0] != want[0] || r.Files[1] != want[1] {
		t.Fatalf("F case: %+v", r)
	}
	fl, files, e2e, mib, otc := r.Summary()
	if fl != "0.2871" || files != "h0=0.2837,h1=0.0034" || e2e != "0.3225" || mib != "16.50" || otc != "51.16" {
		t.Errorf("summary: %s %s %s %s %s", fl, files, e2e, mib, otc)
	}

	// The G case's one file: out.nc.
	g := strings.Replace(string(out[:strings.Index(string(out), "read_decomp")]), "out_h0.nc", "out.nc", 1)
	g = g[:strings.LastIndex(g, "==== Benchmarking")]
	if r := ParseE3SM([]byte(g), 0); r.Status != OK || len(r.Files) != 1 || r.Files[0].Name != "file" {
		t.Errorf("G case: %+v", r)
	}

	// A launch cut short in the second file's report is no output, and
	// the summary keeps the complete file.
	cut := string(out[:strings.Index(string(out), "Time of write flushing             min/max =   0.0034")])
	r = ParseE3SM([]byte(cut), 0)
	if fl, files, _, _, _ := r.Summary(); r.Status != NoOutput || fl != "0.2837" || files != "h0=0.2837" {
		t.Errorf("cut short: %s %s %s", r.Status, fl, files)
	}
	if r := ParseE3SM(nil, 1); r.Status != Failed {
		t.Errorf("exit 1, no output: %s", r.Status)
	} else if fl, files, _, _, otc := r.Summary(); fl != "-" || files != "-" || otc != "-" {
		t.Errorf("exit 1, no output: summary %s %s %s", fl, files, otc)
	}
	for _, line := range []string{"MPI_ABORT was invoked on rank 3", "Segmentation fault (11)", "Error at line 42 in foo.c"} {
		if r := ParseE3SM(append(append([]byte{}, out...), line+"\n"...), 0); r.Status != ErrorInOutput {
			t.Errorf("%q: %s", line, r.Status)
		}
	}
	// "Error" inside a word is not an error.
	if r := ParseE3SM(append(append([]byte{}, out...), "NC_ErrorCount = 0\n"...), 0); r.Status != OK {
		t.Errorf("NC_ErrorCount: %s", r.Status)
	}
}
