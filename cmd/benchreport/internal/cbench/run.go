package cbench

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/collio/collio/cmd/benchreport/internal/cbreport"
	"github.com/collio/collio/cmd/benchreport/internal/progout"
	"github.com/collio/collio/cmd/benchreport/internal/records"
)

// Main runs cbench with the settings of getenv and returns the exit
// status: 0 when every launch and check passed, 1 otherwise, 2 for bad
// settings. Progress goes to stderr.
//
// With CLUSTER=NxP every launch runs across the emulated cluster (see
// cluster.go), which is brought up first when it is not.
func Main(root string, getenv func(string) string, stderr io.Writer, probes ...Probe) int {
	cl, err := clusterFromEnv(root, getenv)
	if err == nil && cl != nil {
		err = cl.checkNP(getenv)
		if err == nil {
			err = cl.up(stderr)
		}
		if err == nil {
			defer cl.down(stderr)
			getenv = cl.env(getenv)
			probes = append(probes, cl.probe())
		}
	}
	var s *Settings
	if err == nil {
		s, err = FromEnv(root, getenv)
	}
	if err == nil && cl != nil {
		s.Cluster = fmt.Sprintf("CLUSTER=%dx%d FS=%s", cl.nodes, cl.ppn, cl.fs)
	}
	if err == nil {
		var r *runner
		if r, err = newRunner(s, stderr, probes); err == nil {
			defer r.cleanup()
			return r.run()
		}
	}
	fmt.Fprintf(stderr, "cbench: %v\n", err)
	if errors.As(err, new(BadSetting)) {
		return 2
	}
	return 1
}

// runner is one cbench run.
type runner struct {
	s        *Settings
	stderr   io.Writer
	probes   []Probe
	l        Launcher
	vs, evs  []Variant
	eref     string // the variant whose E3SM-IO files the others are compared to
	needsLib bool
	notes    []string
	workdirs []string // the C programs' (one per DIRS), then E3SM-IO's
	sessdir  string
	logs     string
	start    time.Time
	seq      int
	total    int
	failed   bool // a launch failed
	checks   bool // an E3SM-IO file check failed
}

func newRunner(s *Settings, stderr io.Writer, probes []Probe) (*runner, error) {
	r := &runner{s: s, stderr: stderr, probes: probes}
	out, _ := exec.Command("ompi_info").Output()
	have := ParseComponents(string(out))
	if len(s.CPrograms()) > 0 {
		vs, notes, lib, err := CheckVariants("VARIANTS", s.Variants, have)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, bad("VARIANTS: nothing left to run")
		}
		r.vs, r.notes, r.needsLib = vs, append(r.notes, notes...), lib
	}
	if s.RunE3SM() {
		vs, notes, lib, err := CheckVariants("E3SM_VARIANTS", s.E3SMVariants, have)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, bad("E3SM_VARIANTS: nothing left to run")
		}
		r.evs, r.notes, r.needsLib = vs, append(r.notes, notes...), r.needsLib || lib
		if s.E3SMGIO = HasGIO(s.E3SMIO); s.E3SMGIO {
			r.notes = append(r.notes, "E3SM_IO's PnetCDF has the GIO driver: every variant but gio runs with nc_driver=mpiio")
		} else if slices.ContainsFunc(vs, Variant.GIO) {
			return nil, bad("E3SM_VARIANTS has gio, but E3SM_IO's PnetCDF has no GIO driver (PnetCDF 1.15 built with GIO: docs/benchmarks.md)")
		}
		r.eref = e3smRef(s.E3SMRef, vs)
		switch {
		case r.eref == "":
			r.notes = append(r.notes, "no host variant among E3SM_VARIANTS: the files are not compared (cmp)")
		case r.eref != s.E3SMRef:
			r.notes = append(r.notes, fmt.Sprintf("E3SM_REF=%s is not among the variants run: the files are compared to %s's", s.E3SMRef, r.eref))
		}
		if p, err := exec.LookPath(s.NCValidator); err == nil {
			s.NCValidator = p
		} else if p := PnetCDFTool(s.E3SMIO, "ncvalidator"); s.NCValidator == "ncvalidator" && p != "" {
			s.NCValidator = p
			r.notes = append(r.notes, "ncvalidator is E3SM_IO's PnetCDF's: "+p)
		} else {
			s.NCValidator = ""
			r.notes = append(r.notes, "no ncvalidator (Debian: pnetcdf-bin, or beside E3SM_IO's PnetCDF): E3SM-IO files are not validated")
		}
	}
	if r.needsLib {
		if !isFile(s.LibCollio) {
			return nil, bad("LIBCOLLIO=%s does not exist (make lib)", s.LibCollio)
		}
		s.LibCollio = abs(s.LibCollio)
	}
	if _, err := exec.LookPath(s.MPICC); err != nil {
		return nil, bad("no %s (scripts/ensure-deps.sh installs Open MPI)", s.MPICC)
	}
	if _, err := exec.LookPath(s.MPIRun[0]); err != nil {
		return nil, bad("no %s", s.MPIRun[0])
	}
	for _, n := range r.notes {
		fmt.Fprintf(stderr, "cbench: note: %s\n", n)
	}

	// The programs, built with the host's plain mpicc.
	r.l = Launcher{S: s, Build: filepath.Join(s.Root, "bin", "cbench"), AsRoot: os.Getuid() == 0, Cores: runtime.NumCPU()}
	if len(s.CPrograms()) > 0 {
		if err := os.MkdirAll(r.l.Build, 0o755); err != nil {
			return nil, err
		}
		for _, p := range []string{"collperf", "callcost"} {
			c := exec.Command(s.MPICC, "-O2", "-Wall", "-o", filepath.Join(r.l.Build, p), filepath.Join(s.Root, "bench", "c", p+".c"), "-lm")
			c.Stdout, c.Stderr = stderr, stderr
			if c.Run() != nil {
				return nil, bad("compiling bench/c/%s.c failed", p)
			}
		}
	}

	// Fresh subdirectories of the storage directories, and a session
	// directory of our own for mpirun: launches of other jobs on the
	// machine share /tmp/ompi.<host>.<uid> and can remove it while ours
	// starts ("orte_init failed ... mkdir: File exists").
	os.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	os.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	var err error
	if r.sessdir, err = os.MkdirTemp("", "cbench-ompi."); err != nil {
		return nil, err
	}
	os.Setenv("OMPI_MCA_orte_tmpdir_base", r.sessdir)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		r.cleanup()
		os.Exit(1)
	}()
	mk := func(dirs []string, prefix string) error {
		for _, d := range dirs {
			w, err := os.MkdirTemp(d, prefix)
			if err != nil {
				return err
			}
			r.workdirs = append(r.workdirs, w)
		}
		return nil
	}
	if len(s.CPrograms()) > 0 {
		if err := mk(s.Dirs, "cbench."); err != nil {
			r.cleanup()
			return nil, err
		}
	}
	if s.RunE3SM() {
		if err := mk(s.E3SMDirs, "cbench-e3sm."); err != nil {
			r.cleanup()
			return nil, err
		}
	}
	return r, nil
}

// e3smRef is ref if it is among vs, else the first host variant, else "".
func e3smRef(ref string, vs []Variant) string {
	first := ""
	for _, v := range vs {
		if v.Name == ref {
			return ref
		}
		if first == "" && !v.Collio() {
			first = v.Name
		}
	}
	return first
}

func (r *runner) cleanup() {
	for _, d := range append(r.workdirs, r.sessdir) {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

func (r *runner) run() int {
	s := r.s
	r.start = time.Now()
	r.logs = filepath.Join(s.Results, "cbench-logs", r.start.Format("20060102-150405"))
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		fmt.Fprintf(r.stderr, "cbench: %v\n", err)
		return 1
	}
	extra := probeColumns(r.probes)
	tsvPath, etsvPath, mdPath := filepath.Join(s.Results, "cbench.tsv"), filepath.Join(s.Results, "cbench-e3sm.tsv"), filepath.Join(s.Results, "cbench.md")
	tsv, err := os.Create(tsvPath)
	if err != nil {
		fmt.Fprintf(r.stderr, "cbench: %v\n", err)
		return 1
	}
	defer tsv.Close()
	cw, _ := records.NewWriter(tsv, records.WithExtra(records.Columns, extra))
	os.Remove(etsvPath)
	var ew *records.Writer
	if s.RunE3SM() {
		etsv, err := os.Create(etsvPath)
		if err != nil {
			fmt.Fprintf(r.stderr, "cbench: %v\n", err)
			return 1
		}
		defer etsv.Close()
		ew, _ = records.NewWriter(etsv, records.WithExtra(records.E3SMColumns, extra))
	}

	cprogs := s.CPrograms()
	ctotal := s.Rounds * len(s.NP) * len(s.Dirs) * len(cprogs) * len(s.Sizes) * len(r.vs)
	etotal := 0
	if s.RunE3SM() {
		etotal = s.Rounds * len(s.E3SMNP) * len(s.E3SMDirs) * len(s.E3SMCases) * len(r.evs)
	}
	r.total = ctotal + etotal
	if len(cprogs) > 0 {
		fmt.Fprintf(r.stderr, "cbench: %d launches: rounds %d, np {%s}, dirs {%s}, programs {%s}, sizes {%s}, %d variants; logs in %s\n",
			ctotal, s.Rounds, strings.Join(s.NP, " "), strings.Join(s.Dirs, " "), strings.Join(cprogs, " "), strings.Join(s.Sizes, " "), len(r.vs), r.logs)
	}
	if s.RunE3SM() {
		fmt.Fprintf(r.stderr, "cbench: %d E3SM-IO launches: rounds %d, cases {%s}, np {%s}, dirs {%s}, %d variants; logs in %s\n",
			etotal, s.Rounds, strings.Join(s.E3SMCases, " "), strings.Join(s.E3SMNP, " "), strings.Join(s.E3SMDirs, " "), len(r.evs), r.logs)
	}

	var crows, erows []records.Row
	if len(cprogs) > 0 {
		crows = r.runC(cw)
	}
	if s.RunE3SM() {
		erows = r.runE3SM(ew)
	}
	wall := int(time.Since(r.start).Seconds())

	var md bytes.Buffer
	var eh *cbreport.E3SMHeader
	if s.RunE3SM() {
		eh = &cbreport.E3SMHeader{Binary: fmt.Sprintf("%s (sha256 %s)", s.E3SMIO, sha12(s.E3SMIO)), Datasets: s.E3SMDatasets,
			Ref: r.eref, Validate: s.NCValidator != ""}
	}
	cbreport.Render(&md, r.header(wall), crows, eh, erows)
	if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
		fmt.Fprintf(r.stderr, "cbench: %v\n", err)
		return 1
	}

	also := ""
	if s.RunE3SM() {
		also = " and " + etsvPath
	}
	fmt.Fprintf(r.stderr, "cbench: wrote %s and %s%s (%ds)\n", mdPath, tsvPath, also, wall)
	for _, n := range r.notes {
		fmt.Fprintf(r.stderr, "cbench: note: %s\n", n)
	}
	if r.checks {
		fmt.Fprintf(r.stderr, "cbench: some E3SM-IO file checks FAILED (a collio variant's files differ from %s's, or ncvalidator rejected a file): see the cmp and ncvalidator columns of %s\n", r.eref, etsvPath)
	}
	if r.failed {
		fmt.Fprintf(r.stderr, "cbench: some launches FAILED: see the status column of %s%s and the logs in %s\n", tsvPath, also, r.logs)
	}
	if r.failed || r.checks {
		return 1
	}
	return 0
}

// runC runs the C programs' cells: per round, np, directory, program and
// size, every variant once, in an order that rotates from round to round
// and cell to cell, so that machine noise spreads over all variants.
func (r *runner) runC(w *records.Writer) []records.Row {
	s := r.s
	var rows []records.Row
	for round := 1; round <= s.Rounds; round++ {
		for _, np := range s.NP {
			n, _ := strconv.Atoi(np)
			for i, label := range s.Dirs {
				dir := r.workdirs[i]
				for _, prog := range s.CPrograms() {
					for _, size := range s.Sizes {
						b, _ := Bytes(size)
						k := s.Calls(b)
						off := rotation(round, r.seq, len(r.vs))
						for j := range r.vs {
							v := r.vs[(j+off)%len(r.vs)]
							r.seq++
							cmd := r.l.Command(prog, n, dir, b, k, v)
							log := filepath.Join(r.logs, logName(r.seq, prog, "np"+np, size, v.Name))
							removeMatching(dir, "*.dat")
							rc, secs, figs, err := launch(cmd, log, r.probes)
							if err != nil {
								fmt.Fprintf(r.stderr, "cbench: %v\n", err)
							}
							out, _ := os.ReadFile(log)
							var res progout.Result
							if strings.HasPrefix(prog, "ior-") {
								res = progout.IOR(out, rc)
							} else {
								res = progout.ResultLine(prog, out, rc)
							}
							row := records.Row{"seq": strconv.Itoa(r.seq), "round": strconv.Itoa(round), "program": prog, "dir": label,
								"np": np, "size": size, "calls": strconv.FormatInt(k, 10), "variant": v.Name, "status": res.Status,
								"rc": strconv.Itoa(rc), "seconds": fmt.Sprintf("%.2f", secs), "log": log, "command": Shell(cmd)}
							for _, f := range []string{"write_MiBs", "read_MiBs", "write_us", "read_us"} {
								row[f] = res.Get(f)
							}
							for c, x := range figs {
								row[c] = x
							}
							w.Write(row)
							rows = append(rows, row)
							if res.Status == progout.OK {
								fmt.Fprintf(r.stderr, "cbench: [%d/%d] r%d np%s %-9s %-11s %-5s %-22s write %9s read %9s MiB/s\n", r.seq, r.total,
									round, np, label, prog, size, v.Name, row.Get("write_MiBs"), row.Get("read_MiBs"))
							} else {
								r.failed = true
								fmt.Fprintf(r.stderr, "cbench: [%d/%d] r%d np%s %-9s %-11s %-5s %-22s FAILED (%s, exit %d); last lines of %s:\n",
									r.seq, r.total, round, np, label, prog, size, v.Name, res.Status, rc, log)
								tail(r.stderr, log, 5)
							}
						}
					}
				}
			}
		}
	}
	return rows
}

// rotation is where a cell's variant order starts: one further each round
// and each cell, so that no variant always follows the same one.
func rotation(round, launched, nvariants int) int {
	return (round - 1 + launched/nvariants) % nvariants
}

// runE3SM runs E3SM-IO's cells (case, np, directory): all variants of a
// cell in a row, each writing under DIR/<its index>/, then the file checks.
func (r *runner) runE3SM(w *records.Writer) []records.Row {
	s := r.s
	ndirs := len(r.workdirs) - len(s.E3SMDirs)
	var rows []records.Row
	eseq := 0
	for round := 1; round <= s.Rounds; round++ {
		for _, np := range s.E3SMNP {
			n, _ := strconv.Atoi(np)
			for i, label := range s.E3SMDirs {
				dir := r.workdirs[ndirs+i]
				for _, c := range s.E3SMCases {
					removeMatching(dir, "*")
					cell := make([]records.Row, len(r.evs))
					off := rotation(round, eseq, len(r.evs))
					for jj := range r.evs {
						j := (jj + off) % len(r.evs)
						v := r.evs[j]
						r.seq++
						eseq++
						out := filepath.Join(dir, strconv.Itoa(j))
						os.MkdirAll(out, 0o755)
						cmd := r.l.E3SMCommand(n, filepath.Join(out, "out.nc"), c, v)
						log := filepath.Join(r.logs, logName(r.seq, "e3sm", c, "np"+np, v.Name))
						rc, secs, figs, err := launch(cmd, log, r.probes)
						if err != nil {
							fmt.Fprintf(r.stderr, "cbench: %v\n", err)
						}
						text, _ := os.ReadFile(log)
						res := progout.ParseE3SM(text, rc)
						fl, flf, e2e, mib, otc := res.Summary()
						row := records.Row{"seq": strconv.Itoa(r.seq), "round": strconv.Itoa(round), "case": c, "dir": label, "np": np,
							"variant": v.Name, "status": res.Status, "rc": strconv.Itoa(rc), "seconds": fmt.Sprintf("%.2f", secs),
							"flush_s": fl, "flush_files": flf, "e2e_s": e2e, "MiB": mib, "otc_MiBs": otc, "log": log, "command": Shell(cmd)}
						for k, x := range figs {
							row[k] = x
						}
						cell[j] = row
						if res.Status == progout.OK {
							fmt.Fprintf(r.stderr, "cbench: [%d/%d] r%d np%-2s %-9s e3sm %s  %-34s flush %8s s (%s)  %8s MiB/s open-to-close\n", r.seq, r.total,
								round, np, label, c, v.Name, fl, flf, otc)
						} else {
							r.failed = true
							fmt.Fprintf(r.stderr, "cbench: [%d/%d] r%d np%-2s %-9s e3sm %s  %-34s FAILED (%s, exit %d); last lines of %s:\n",
								r.seq, r.total, round, np, label, c, v.Name, res.Status, rc, log)
							tail(r.stderr, log, 5)
						}
					}
					msg := r.checkE3SM(dir, cell)
					for _, row := range cell {
						w.Write(row)
					}
					rows = append(rows, cell...)
					fmt.Fprintf(r.stderr, "cbench: r%d np%s %s e3sm %s files (cmp to %s / ncvalidator):%s\n", round, np, label, c, r.eref, msg)
					removeMatching(dir, "*")
				}
			}
		}
	}
	return rows
}

// checkE3SM compares every successful variant's files under dir/<j>/ with
// the reference's (cmp) and runs ncvalidator on them, filling the rows'
// cmp and ncvalidator columns; a collio variant whose files differ, or an
// invalid file, fails the run.
func (r *runner) checkE3SM(dir string, cell []records.Row) string {
	refj := -1
	for j, v := range r.evs {
		if v.Name == r.eref {
			refj = j
		}
	}
	var msg strings.Builder
	for j, row := range cell {
		row["cmp"], row["ncvalidator"] = "-", "-"
		if row["status"] != progout.OK {
			continue
		}
		mine := filepath.Join(dir, strconv.Itoa(j))
		switch {
		case j == refj:
			row["cmp"] = "ref"
		case refj < 0:
		case cell[refj]["status"] != progout.OK:
			row["cmp"] = "no-ref"
		default:
			row["cmp"] = sameFiles(filepath.Join(dir, strconv.Itoa(refj)), mine)
			if row["cmp"] == "" {
				row["cmp"] = "same"
			}
		}
		if r.s.NCValidator != "" {
			var invalid []string
			files, _ := filepath.Glob(filepath.Join(mine, "*.nc"))
			for _, f := range files {
				if exec.Command(r.s.NCValidator, "-q", f).Run() != nil {
					invalid = append(invalid, filepath.Base(f))
				}
			}
			row["ncvalidator"] = "valid"
			if len(invalid) > 0 {
				row["ncvalidator"] = "invalid:" + strings.Join(invalid, ";")
				r.checks = true
			}
		}
		switch c := row["cmp"]; {
		case !r.evs[j].Collio(), c == "same", c == "ref", c == "no-ref", c == "-":
		default:
			r.checks = true
		}
		fmt.Fprintf(&msg, " %s:%s/%s", r.evs[j].Name, row["cmp"], row["ncvalidator"])
	}
	return msg.String()
}

// header is the report's header.
func (r *runner) header(wall int) cbreport.Header {
	s := r.s
	h := cbreport.Header{Command: s.Rerun(), Date: time.Now().Format("2006-01-02 15:04:05 -0700"), Launches: r.seq, Seconds: wall, Notes: r.notes}
	h.Commit = "unknown"
	if out, err := exec.Command("git", "-C", s.Root, "describe", "--always", "--dirty").Output(); err == nil {
		h.Commit = strings.TrimSpace(string(out))
	}
	if r.needsLib {
		built := "?"
		if fi, err := os.Stat(s.LibCollio); err == nil {
			built = fi.ModTime().Format("2006-01-02 15:04")
		}
		h.Library = fmt.Sprintf("%s (sha256 %s, built %s)", s.LibCollio, sha12(s.LibCollio), built)
	}
	uname, _ := exec.Command("uname", "-sr").Output()
	mpi, _ := exec.Command(s.MPIRun[0], append(s.MPIRun[1:], "--version")...).Output()
	first, _, _ := strings.Cut(string(mpi), "\n")
	h.Machine = fmt.Sprintf("%d cores, %s, %s", r.l.Cores, strings.TrimSpace(string(uname)), first)
	return h
}

// sha12 is the first 12 hex digits of the file's SHA-256.
func sha12(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return fmt.Sprintf("%x", h.Sum(nil))[:12]
}
