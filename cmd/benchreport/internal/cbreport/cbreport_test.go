package cbreport

import (
	"bytes"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/collio/collio/cmd/benchreport/internal/records"
)

// The golden files were written by the awk programs of the former
// scripts/cbench.sh from the same records; -update rewrites them from
// this package.
var update = flag.Bool("update", false, "rewrite the golden files")

func readRows(t *testing.T, name string) []records.Row {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, rows, err := records.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
	}
}

// TestC renders a real run's records (np 2, 64 KiB calls, two rounds of
// collperf, callcost and both IOR programs).
func TestC(t *testing.T) {
	for _, name := range []string{"cbench", "cbench-failed"} {
		var b bytes.Buffer
		C(&b, readRows(t, name+".tsv"))
		golden(t, name+".golden.md", b.Bytes())
	}
}

// TestExtraColumns: a column the launcher's probe measured gets medians.
func TestExtraColumns(t *testing.T) {
	rows := readRows(t, "cbench.tsv")
	for i, r := range rows {
		r["wire_bytes"] = strconv.Itoa(1000 * (i + 1))
	}
	var b bytes.Buffer
	C(&b, rows)
	for _, want := range []string{
		"| variant | write MiB/s | read MiB/s | write / best host | read / best host | wire_bytes | ok |",
		// collperf's individual: launches 1 and 20.
		"| individual | 198 | 259 | 1.00 | 1.00 | 10500 | 2/2 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

func TestE3SM(t *testing.T) {
	var b bytes.Buffer
	h := E3SMHeader{Binary: "/opt/e3sm_io (sha256 0123456789ab)", Datasets: "/opt/datasets", Ref: "ompio", Validate: true}
	E3SM(&b, h, readRows(t, "cbench-e3sm.tsv"))
	golden(t, "cbench-e3sm.golden.md", b.Bytes())
}

func TestRender(t *testing.T) {
	h := Header{Command: "NP='2' scripts/cbench.sh", Date: "2026-11-28 10:01:44 +0000", Commit: "060d162",
		Machine: "2 cores, Linux 6.18, mpirun (Open MPI) 4.1.4", Launches: 32, Seconds: 100, Notes: []string{"variant vulcan skipped"}}
	var b bytes.Buffer
	Render(&b, h, readRows(t, "cbench.tsv"), nil, nil)
	s := b.String()
	for _, want := range []string{
		"- command: `NP='2' scripts/cbench.sh`\n",
		"- 32 launches in 100s; every launch of every variant is in cbench.tsv with its command\n",
		"- note: variant vulcan skipped\n\n## Example commands",
		"| program | dir | np | size |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "library:") || strings.Contains(s, "E3SM") {
		t.Errorf("a library or E3SM line without either:\n%s", s)
	}
}

// TestForcedSummary: with two forced strategies in the run, collio's
// automatic choice is set against the faster of them.
func TestForcedSummary(t *testing.T) {
	rows := readRows(t, "cbench.tsv")
	var more []records.Row
	for _, r := range rows {
		if r.Get("variant") != "collio" {
			continue
		}
		for _, f := range []struct {
			v     string
			scale float64
		}{{"collio:twophase", 2}, {"collio:tam", 0.5}} {
			v, scale := f.v, f.scale
			c := records.Row{}
			for k, x := range r {
				c[k] = x
			}
			c["variant"] = v
			for _, col := range []string{"write_MiBs", "read_MiBs"} {
				if x, err := strconv.ParseFloat(r.Get(col), 64); err == nil {
					c[col] = strconv.FormatFloat(x*scale, 'f', 2, 64)
				}
			}
			more = append(more, c)
		}
	}
	var b bytes.Buffer
	C(&b, append(rows, more...))
	s := b.String()
	for _, want := range []string{
		"## Summary: collio (automatic) / best forced strategy",
		"Forced: collio:twophase, collio:tam.",
		"(collio:twophase) | 0.50 | 4.00 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	b.Reset()
	C(&b, rows)
	if strings.Contains(b.String(), "best forced") {
		t.Error("a run with one forced strategy got the forced summary")
	}
}
