// Command benchreport turns the JSON files that collperf, iorbench and
// patterns wrote with -json during scripts/bench.sh into a markdown report
// (results/bench.md), one JSON file with everything (results/bench.json)
// and PNG plots next to the markdown: for each workload (collperf, each
// IOR case, each pattern), storage directory and operation, a row per
// implementation with the best and median bandwidth over the repetitions
// and the ratio to the best host MPI-IO variant of the same table; collio's
// breakdown per collio variant; memory per rank; with several workloads a
// summary table of the ratios first; the machine and the command lines.
// Plots (gonum.org/v1/plot), per storage: bench-bandwidth-<label>.png
// (grouped bars of every implementation's median MiB/s per workload, write
// and read) and bench-breakdown-<label>.png (collio variants' phases
// stacked: plan, request exchange, shuffle, write/read not hidden, RMW).
// A report of collperf runs only keeps collperf's original layout.
//
//	benchreport -in results/raw/20250101-120000 -md results/bench.md -json results/bench.json -cmd "scripts/bench.sh"
//
// Subcommands run and report the other benchmarks, so that their parsing,
// statistics and tables live here too:
//
//	benchreport cbench -root DIR          the C benchmarks (scripts/cbench.sh, make cbench)
//	benchreport pair DIR                  scripts/pair.sh's collperf JSON files
//	benchreport pieces TSV MD             scripts/pieces.sh's records
//	benchreport syscallcost -np N DIR MODE...   scripts/syscallcost.sh's launches
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		if sub, ok := subcommands[os.Args[1]]; ok {
			os.Exit(sub(os.Args[2:]))
		}
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	in := fs.String("in", "", "directory of collperf, iorbench and patterns JSON files (and launches.tsv from scripts/bench.sh); required")
	md := fs.String("md", "results/bench.md", "markdown report to write (empty: none)")
	js := fs.String("json", "results/bench.json", "JSON report to write (empty: none)")
	cmd := fs.String("cmd", "", "the benchmark's command line, shown in the report")
	quiet := fs.Bool("q", false, "do not print the markdown to stdout")
	plots := fs.String("plots", "", "directory for the PNG plots (default: the directory of -md; none without -md)")
	noPlots := fs.Bool("noplots", false, "write no plots")
	var notes []string
	fs.Func("note", "a note to print in the report, e.g. a variant the benchmark skipped (repeatable)", func(s string) error {
		notes = append(notes, s)
		return nil
	})
	e10 := fs.Bool("e10", false, "E10 cache report instead: the arguments are collperf -phases JSON files, the first without the cache; markdown to stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *e10 {
		if fs.NArg() == 0 {
			return fmt.Errorf("-e10: give the collperf -phases JSON files")
		}
		return renderE10(stdout, fs.Args())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *in == "" {
		return fmt.Errorf("-in is required")
	}
	runs, bad, err := loadRuns(*in)
	if err != nil {
		return err
	}
	launches, err := loadLaunches(filepath.Join(*in, "launches.tsv"))
	if err != nil {
		return err
	}
	if len(runs) == 0 && len(launches) == 0 {
		return fmt.Errorf("%s: no collperf JSON files", *in)
	}
	rep := build(runs, launches)
	rep.Failures = append(bad, rep.Failures...)
	rep.Generated = time.Now().Format(time.RFC3339)
	rep.Command = *cmd
	rep.Notes = notes
	rep.Machine = probeMachine(runs)

	plotDir := *plots
	if plotDir == "" && *md != "" {
		plotDir = filepath.Dir(*md)
	}
	if !*noPlots && plotDir != "" && len(rep.Sections) > 0 {
		names, err := writePlots(rep, plotDir)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		// The markdown links them relative to itself.
		for _, n := range names {
			ref := filepath.Join(plotDir, n)
			if *md != "" {
				if rel, err := filepath.Rel(filepath.Dir(*md), ref); err == nil {
					ref = rel
				}
			}
			rep.Plots = append(rep.Plots, ref)
		}
	}

	var buf bytes.Buffer
	render(&buf, rep)
	if *md != "" {
		if err := writeFile(*md, buf.Bytes()); err != nil {
			return err
		}
	}
	if *js != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := writeFile(*js, append(b, '\n')); err != nil {
			return err
		}
	}
	if !*quiet {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return nil
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// loadRuns reads every *.json in dir, in name order (scripts/bench.sh
// numbers them in launch order). Files that are empty or not collperf
// output (a launch that died before writing) are reported, not fatal.
func loadRuns(dir string) (runs []collperfRun, bad []string, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(names)
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		var r collperfRun
		switch err := json.Unmarshal(b, &r); {
		case len(bytes.TrimSpace(b)) == 0:
			bad = append(bad, fmt.Sprintf("%s: empty (collperf did not finish)", name))
			continue
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: not collperf JSON: %v", name, err))
			continue
		case r.NP == 0:
			bad = append(bad, fmt.Sprintf("%s: not collperf JSON (no np)", name))
			continue
		}
		r.File = name
		runs = append(runs, r)
	}
	return runs, bad, nil
}

// loadLaunches reads the launch log (tab-separated: seq, label, variant,
// dir, rc, seconds, json, command); a missing file is no launches.
func loadLaunches(path string) ([]launch, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseLaunches(f, path)
}

func parseLaunches(r io.Reader, name string) ([]launch, error) {
	var out []launch
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 8)
		if len(f) != 8 {
			return nil, fmt.Errorf("%s:%d: want 8 tab-separated fields, got %d", name, n, len(f))
		}
		var l launch
		var err1, err2, err3 error
		l.Seq, err1 = strconv.Atoi(f[0])
		l.RC, err2 = strconv.Atoi(f[4])
		l.Seconds, err3 = strconv.ParseFloat(f[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("%s:%d: bad seq, rc or seconds in %q", name, n, line)
		}
		l.Label, l.Variant, l.Dir, l.JSON, l.Command = f[1], f[2], f[3], f[6], f[7]
		out = append(out, l)
	}
	return out, sc.Err()
}
