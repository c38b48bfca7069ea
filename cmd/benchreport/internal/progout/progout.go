// Package progout reads what one launch of a benchmark program printed:
// the result line of the C benchmarks (bench/c: collperf, callcost,
// pieces), IOR's summary and e3sm_io's report. Each parser also decides
// the launch's status from its exit code and its output. Figures stay as
// the program printed them, so that the records and the progress lines
// show the program's own digits.
package progout

import (
	"bufio"
	"bytes"
	"strings"
)

// The statuses of a launch.
const (
	OK            = "ok"
	Failed        = "failed"          // nonzero exit
	Timeout       = "timeout"         // killed by timeout(1): exit 124, or 137 after -k
	NoOutput      = "no-output"       // exit 0 but no result
	WrongData     = "wrong-data"      // the program read back wrong values
	ErrorInOutput = "error-in-output" // exit 0 and a result, but an error was printed
)

// exitStatus is the status an exit code alone decides, "" for exit 0.
func exitStatus(rc int) string {
	switch {
	case rc == 124 || rc == 137:
		return Timeout
	case rc != 0:
		return Failed
	}
	return ""
}

// Result is one launch's status and figures (name to the printed value).
type Result struct {
	Status  string
	Figures map[string]string
}

// Get is the figure's printed value, "-" when the program did not print it.
func (r Result) Get(name string) string {
	if v, ok := r.Figures[name]; ok && v != "" {
		return v
	}
	return "-"
}

func lines(out []byte) *bufio.Scanner {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	return sc
}

// ResultLine reads the line the C benchmarks print on rank 0,
//
//	collperf write_MiBs=1424.3 read_MiBs=5966.1 ... verified=yes
//
// whose first word is prog; every key=value pair is a figure (a later
// line's values win). A line without verified=yes is wrong data.
func ResultLine(prog string, out []byte, rc int) Result {
	r := Result{Figures: map[string]string{}}
	seen := false
	for sc := lines(out); sc.Scan(); {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != prog {
			continue
		}
		seen = true
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			r.Figures[k] = v
		}
	}
	r.Status = exitStatus(rc)
	switch {
	case r.Status != "":
	case !seen:
		r.Status = NoOutput
	case r.Figures["verified"] != "yes":
		r.Status = WrongData
	default:
		r.Status = OK
	}
	return r
}

// IOR reads IOR's summary: after "Summary of all tests:", the lines that
// begin with write and read carry Max(MiB) in their second column (with
// -i 1, the one repetition's bandwidth). Figures: write_MiBs, read_MiBs.
// IOR reports some failures without a nonzero exit, so an error message
// anywhere in the output makes the launch error-in-output.
func IOR(out []byte, rc int) Result {
	r := Result{Figures: map[string]string{}}
	summary, errs := false, false
	for sc := lines(out); sc.Scan(); {
		line := sc.Text()
		if strings.Contains(line, "ERROR") || strings.Contains(line, "Error") || strings.Contains(line, "error:") {
			errs = true
		}
		if strings.HasPrefix(line, "Summary of all tests:") {
			summary = true
			continue
		}
		f := strings.Fields(line)
		if !summary || len(f) < 2 {
			continue
		}
		switch f[0] {
		case "write":
			r.Figures["write_MiBs"] = f[1]
		case "read":
			r.Figures["read_MiBs"] = f[1]
		}
	}
	r.Status = exitStatus(rc)
	switch {
	case r.Status != "":
	case r.Figures["write_MiBs"] == "" || r.Figures["read_MiBs"] == "":
		r.Status = NoOutput
	case errs:
		r.Status = ErrorInOutput
	default:
		r.Status = OK
	}
	return r
}
