package records

import (
	"bytes"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	cols := WithExtra(Columns, []string{"wire_bytes"})
	if i := slices.Index(cols, "wire_bytes"); i != slices.Index(cols, "log")-1 {
		t.Fatalf("extra column at %d in %v", i, cols)
	}
	var b bytes.Buffer
	w, err := NewWriter(&b, cols)
	if err != nil {
		t.Fatal(err)
	}
	in := Row{"seq": "1", "program": "collperf", "status": "ok", "write_MiBs": "296.1", "wire_bytes": "12345",
		"command": "mpirun -np 2\tcollperf\nx"}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	got, rows, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, cols) || len(rows) != 1 {
		t.Fatalf("read %v, %d rows", got, len(rows))
	}
	r := rows[0]
	if r.Get("write_MiBs") != "296.1" || r.Get("wire_bytes") != "12345" || r.Get("read_us") != "-" ||
		r.Get("command") != "mpirun -np 2 collperf x" {
		t.Errorf("row %v", r)
	}
	if _, _, err := Read(bytes.NewBufferString("a\tb\n1\n")); err == nil {
		t.Error("a short line read without an error")
	}
}
