package cbench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/collio/collio/cmd/benchreport/internal/records"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSettings(t *testing.T) {
	s, err := FromEnv("/repo", env(map[string]string{"DIRS": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	// The documented calls per phase with the defaults.
	for size, want := range map[string]int64{"16k": 1024, "256k": 256, "1m": 64, "4m": 16, "64m": 16} {
		b, err := Bytes(size)
		if err != nil || s.Calls(b) != want {
			t.Errorf("%s: %d calls (%v), want %d", size, s.Calls(b), err, want)
		}
	}
	if !slices.Equal(s.NP, []string{"2", "4"}) || s.Rounds != 3 || len(s.Variants) != 10 || !slices.Equal(s.Programs, []string{"collperf", "callcost"}) {
		t.Errorf("defaults: %+v", s)
	}
	q, err := FromEnv("/repo", env(map[string]string{"QUICK": "1", "DIRS": t.TempDir(), "ROUNDS": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Sizes, []string{"16k", "1m"}) || q.Rounds != 2 || q.MaxCalls != 256 || q.DataBytes != 4<<20 {
		t.Errorf("QUICK=1: %+v", q)
	}
	if !strings.HasPrefix(q.Rerun(), "QUICK=1 NP='2' SIZES='16k 1m' ") || !strings.HasSuffix(q.Rerun(), " MAXCALLS=256 scripts/cbench.sh") {
		t.Errorf("rerun: %s", q.Rerun())
	}
	for _, bad := range []map[string]string{
		{"NP": "0"}, {"NP": "2 x"}, {"SIZES": "16q"}, {"SIZES": "0k"}, {"DIRS": "/nonexistent"}, {"ROUNDS": "-1"},
		{"MINCALLS": "64", "MAXCALLS": "16"}, {"DATA": "lots"}, {"PROGRAMS": "ior-seg"}, {"PROGRAMS": "e3sm"}, {"PROGRAMS": "hdf5"},
		{"IOR": "/nonexistent/ior"},
	} {
		if bad["DIRS"] == "" {
			bad["DIRS"] = t.TempDir()
		}
		if _, err := FromEnv("/repo", env(bad)); err == nil {
			t.Errorf("%v: no error", bad)
		} else if _, ok := err.(BadSetting); !ok {
			t.Errorf("%v: %v is not a BadSetting", bad, err)
		}
	}
}

func TestVariants(t *testing.T) {
	have := ParseComponents("                 MCA fcoll: individual (MCA v2.1.0, API v2.0.0, Component v4.1.4)\n" +
		"                 MCA io: romio321 (MCA v2.1.0, API v2.0.0, Component v4.1.4)\n")
	vs, notes, lib, err := CheckVariants("VARIANTS", []string{"individual", "vulcan", "romio321", "ompio", "collio:tam+cb_nodes=2,a=b"}, have)
	if err != nil || !lib || len(vs) != 4 || len(notes) != 1 || !strings.Contains(notes[0], "vulcan skipped") {
		t.Fatalf("%v %v %v %v", vs, notes, lib, err)
	}
	if v := vs[3]; v.Base != "collio:tam" || !slices.Equal(v.Hints, []string{"collio_strategy=tam", "cb_nodes=2", "a=b"}) {
		t.Errorf("%+v", v)
	}
	for _, n := range []string{"collio:fast", "mpich", "gio"} {
		if _, _, _, err := CheckVariants("VARIANTS", []string{n}, have); err == nil {
			t.Errorf("%s: no error", n)
		}
	}
	// gio is an E3SM-IO variant: PnetCDF's driver hint first.
	vs, _, lib, err = CheckVariants("E3SM_VARIANTS", []string{"gio", "gio+nc_num_aggrs_per_node=2"}, have)
	if err != nil || lib || len(vs) != 2 || !vs[1].GIO() || vs[1].Collio() ||
		!slices.Equal(vs[1].Hints, []string{"nc_driver=gio", "nc_num_aggrs_per_node=2"}) {
		t.Errorf("%+v %v %v", vs, lib, err)
	}
}

// TestCommands: the launch commands are those of the former script (from
// a run's records, cbreport's testdata).
func TestCommands(t *testing.T) {
	s := &Settings{LaunchTimeout: 300, MPIRun: []string{"mpirun"}, LibCollio: "/repo/bin/libcollio.so", IOR: "/opt/ior/bin/ior",
		E3SMIO: "/opt/e3sm_io", E3SMDatasets: "/opt/datasets", E3SMArgs: "-r 2"}
	l := Launcher{S: s, Build: "/repo/bin/cbench", AsRoot: true, Cores: 2}
	d := "/dev/shm/cbench.X"
	ind, ior := ParseVariant("collio:independent+cb_buffer_size=1m"), ParseVariant("individual")
	for _, c := range []struct {
		got  []string
		want string
	}{
		{l.Command("collperf", 2, d, 65536, 128, ParseVariant("romio321")),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 2 --mca io romio321 /repo/bin/cbench/collperf -s 65536 -r 128 -f /dev/shm/cbench.X/collperf.dat"},
		{l.Command("callcost", 2, d, 65536, 128, ind),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 2 -x LD_PRELOAD=/repo/bin/libcollio.so /repo/bin/cbench/callcost -c 128 -b 65536 -f /dev/shm/cbench.X/callcost.dat -H collio_strategy=independent,cb_buffer_size=1m"},
		{l.Command("ior-seg", 2, d, 65536, 128, ind),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 2 -x LD_PRELOAD=/repo/bin/libcollio.so -x IOR_HINT__MPI__collio_strategy=independent -x IOR_HINT__MPI__cb_buffer_size=1m /opt/ior/bin/ior -a MPIIO -c -b 8388608 -t 65536 -s 1 -w -r -C -e -i 1 -o /dev/shm/cbench.X/ior.dat"},
		{l.Command("ior-strided", 4, d, 65536, 128, ior),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 4 --oversubscribe --mca io ompio --mca fcoll individual /opt/ior/bin/ior -a MPIIO -c -b 65536 -t 65536 -s 128 -w -r -C -e -i 1 -o /dev/shm/cbench.X/ior.dat"},
		{l.Command("ior-strided-own", 4, d, 65536, 128, ior),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 4 --oversubscribe --mca io ompio --mca fcoll individual /opt/ior/bin/ior -a MPIIO -c -b 65536 -t 65536 -s 128 -w -r -e -i 1 -o /dev/shm/cbench.X/ior.dat"},
		{l.E3SMCommand(2, "/dev/shm/e/0/out.nc", "f", ParseVariant("collio:tam+collio_node_size=4")),
			"timeout -k 10 300 mpirun --allow-run-as-root -np 2 -x LD_PRELOAD=/repo/bin/libcollio.so -x 'PNETCDF_HINTS=collio_strategy=tam;collio_node_size=4' /opt/e3sm_io -k -r 2 -o /dev/shm/e/0/out.nc /opt/datasets/map_f_case_16p.nc"},
	} {
		if g := Shell(c.got); g != c.want {
			t.Errorf("\n got %s\nwant %s", g, c.want)
		}
	}
	// An e3sm_io whose PnetCDF has GIO, its default driver: gio asks for
	// it, the other variants for MPI-IO, before their own hints.
	s.E3SMGIO = true
	for _, c := range []struct{ v, want string }{
		{"gio+nc_num_aggrs_per_node=2", "timeout -k 10 300 mpirun --allow-run-as-root -np 4 --oversubscribe -x 'PNETCDF_HINTS=nc_driver=gio;nc_num_aggrs_per_node=2' /opt/e3sm_io -k -r 2 -o /dev/shm/e/0/out.nc /opt/datasets/map_g_case_16p.nc"},
		{"ompio", "timeout -k 10 300 mpirun --allow-run-as-root -np 4 --oversubscribe --mca io ompio -x PNETCDF_HINTS=nc_driver=mpiio /opt/e3sm_io -k -r 2 -o /dev/shm/e/0/out.nc /opt/datasets/map_g_case_16p.nc"},
		{"collio:tam", "timeout -k 10 300 mpirun --allow-run-as-root -np 4 --oversubscribe -x LD_PRELOAD=/repo/bin/libcollio.so -x 'PNETCDF_HINTS=nc_driver=mpiio;collio_strategy=tam' /opt/e3sm_io -k -r 2 -o /dev/shm/e/0/out.nc /opt/datasets/map_g_case_16p.nc"},
	} {
		if g := Shell(l.E3SMCommand(4, "/dev/shm/e/0/out.nc", "g", ParseVariant(c.v))); g != c.want {
			t.Errorf("\n got %s\nwant %s", g, c.want)
		}
	}
	s.E3SMGIO = false
	// A launcher that runs mpirun elsewhere, with its own arguments.
	s.MPIRun, s.MPIRunArgs = []string{"bin/vcluster", "mpirun"}, []string{"--hostfile", "h"}
	if g := Shell(l.Command("collperf", 4, d, 1, 1, ParseVariant("ompio"))); !strings.HasPrefix(g, "timeout -k 10 300 bin/vcluster mpirun --allow-run-as-root --hostfile h -np 4 --mca io ompio ") {
		t.Errorf("wrapper: %s", g)
	}
}

// TestRotation: the variant order of the former script's launches.
func TestRotation(t *testing.T) {
	vs := []string{"a", "b", "c", "d"}
	var got []string
	launched := 0
	for round := 1; round <= 2; round++ {
		for range 4 { // cells
			off := rotation(round, launched, len(vs))
			for j := range vs {
				got = append(got, vs[(j+off)%len(vs)])
				launched++
			}
		}
	}
	want := "abcd bcda cdab dabc bcda cdab dabc abcd"
	if g := strings.Join(got, ""); g != strings.ReplaceAll(want, " ", "") {
		t.Errorf("order %s, want %s", g, want)
	}
}

// wire is a probe as the emulated cluster's counters would be.
type wire struct{ n int }

func (w *wire) Columns() []string { return []string{"wire_bytes"} }
func (w *wire) Start() error      { w.n++; return nil }
func (w *wire) Stop() (records.Row, error) {
	return records.Row{"wire_bytes": strings.Repeat("1", w.n)}, nil
}

// TestMain runs a whole cbench with a stand-in for mpirun and mpicc.
func TestRun(t *testing.T) {
	res, dir := t.TempDir(), t.TempDir()
	lib := filepath.Join(t.TempDir(), "libcollio.so")
	os.WriteFile(lib, nil, 0o644)
	fake, _ := filepath.Abs("testdata/fake-mpirun")
	e := map[string]string{"NP": "2", "SIZES": "16k 1m", "DIRS": dir, "ROUNDS": "2", "VARIANTS": "ompio collio", "DATA": "1m",
		"MPICC": "true", "MPIRUN": fake, "LIBCOLLIO": lib, "RESULTS": res}
	var stderr bytes.Buffer
	root := t.TempDir()
	if rc := Main(root, env(e), &stderr, &wire{}); rc != 0 {
		t.Fatalf("exit %d:\n%s", rc, stderr.String())
	}
	if n := strings.Count(stderr.String(), "] r"); n != 16 {
		t.Errorf("%d progress lines:\n%s", n, stderr.String())
	}
	f, _ := os.Open(filepath.Join(res, "cbench.tsv"))
	cols, rows, err := records.Read(f)
	f.Close()
	if err != nil || len(rows) != 16 || !slices.Contains(cols, "wire_bytes") {
		t.Fatalf("records: %v %d %v", cols, len(rows), err)
	}
	if r := rows[15]; r["status"] != "ok" || r["variant"] != "collio" || r["write_us"] != "10.0" || r["wire_bytes"] != strings.Repeat("1", 16) || r["calls"] != "16" {
		t.Errorf("last record %v", r)
	}
	md, _ := os.ReadFile(filepath.Join(res, "cbench.md"))
	for _, want := range []string{"| callcost | " + dir + " | 2 | 1m | 300 / 300 (ompio) | 1.00 | 400 / 400 (ompio) | 1.00 |",
		"| collio | 100 | 200 | 1.00 | 1.00 | 55555561 | 2/2 |", // wire_bytes: launches 2 and 9
		"| read / best host | wire_bytes | ok |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("left in DIRS: %v", left)
	}

	// A failed variant: exit 1, its launches marked, the report written.
	t.Setenv("FAKE_FAIL", "LD_PRELOAD")
	stderr.Reset()
	if rc := Main(root, env(e), &stderr); rc != 1 {
		t.Fatalf("exit %d with failures:\n%s", rc, stderr.String())
	}
	if !strings.Contains(stderr.String(), "FAILED (failed, exit 3); last lines of") || !strings.Contains(stderr.String(), "    MPI_ABORT was invoked") {
		t.Errorf("no failure lines:\n%s", stderr.String())
	}
	md, _ = os.ReadFile(filepath.Join(res, "cbench.md"))
	if !bytes.Contains(md, []byte("| collio | — | — | — | — | **0/2 FAILED: failed failed** |")) {
		t.Errorf("no failed row in\n%s", md)
	}
}

// TestHasGIO: the library ldd names, and a program without GIO.
func TestHasGIO(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibpnetcdf.so.8 => /opt/pnetcdf-1.15/lib/libpnetcdf.so.8 (0x00007f3a)\n" +
		"\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 (0x00007f39)\n"
	if g := lddPath(out, "libpnetcdf.so"); g != "/opt/pnetcdf-1.15/lib/libpnetcdf.so.8" {
		t.Errorf("lddPath: %q", g)
	}
	if g := lddPath(out, "libhdf5.so"); g != "" {
		t.Errorf("lddPath of a missing library: %q", g)
	}
	// A defined symbol of a library ldd finds (go test's own binary is
	// stripped), an undefined one, and programs without GIO.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	ldd, err := exec.Command("ldd", sh).Output()
	if err != nil {
		t.Skipf("ldd %s: %v", sh, err)
	}
	libc := lddPath(string(ldd), "libc.so")
	if libc == "" || !hasSymbol(libc, "malloc") || hasSymbol(sh, "malloc") || hasSymbol(libc, "GIO_open") || HasGIO(sh) || HasGIO("/nonexistent") {
		t.Errorf("symbols of %s (%q)", sh, libc)
	}
}

// TestToolBeside: a PnetCDF installed under one prefix has its tools in
// bin beside lib; a missing or non-executable tool is none.
func TestToolBeside(t *testing.T) {
	prefix := t.TempDir()
	lib := filepath.Join(prefix, "lib", "libpnetcdf.so.8")
	tool := filepath.Join(prefix, "bin", "ncvalidator")
	for _, d := range []string{filepath.Dir(lib), filepath.Dir(tool)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if g := toolBeside(lib, "ncvalidator"); g != "" {
		t.Errorf("no tool yet: %q", g)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g := toolBeside(lib, "ncvalidator"); g != "" {
		t.Errorf("not executable: %q", g)
	}
	if err := os.Chmod(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	if g := toolBeside(lib, "ncvalidator"); g != tool {
		t.Errorf("toolBeside = %q, want %q", g, tool)
	}
	if g := toolBeside("", "ncvalidator"); g != "" {
		t.Errorf("no library: %q", g)
	}
	if g := PnetCDFTool("/nonexistent", "ncvalidator"); g != "" {
		t.Errorf("no program: %q", g)
	}
}
