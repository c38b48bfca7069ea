package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/collio/collio/cmd/benchreport/internal/cbench"
	"github.com/collio/collio/cmd/benchreport/internal/pair"
	"github.com/collio/collio/cmd/benchreport/internal/pieces"
	"github.com/collio/collio/cmd/benchreport/internal/syscallcost"
)

// subcommands run or report the benchmarks of scripts/, which launch the
// programs and leave their output to these.
var subcommands = map[string]func(args []string) int{
	"cbench":      cbenchMain,
	"pair":        pairMain,
	"pieces":      piecesMain,
	"syscallcost": syscallcostMain,
}

// cbenchMain is "benchreport cbench": its settings come from the
// environment (cbench.Usage); -root is the repository.
func cbenchMain(args []string) int {
	fs := flag.NewFlagSet("cbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	root := fs.String("root", ".", "the repository (bench/c, bin/)")
	if err := fs.Parse(args); err == flag.ErrHelp {
		fmt.Print(cbench.Usage)
		return 0
	} else if err != nil || fs.NArg() > 0 {
		fmt.Fprint(os.Stderr, cbench.Usage)
		return 2
	}
	return cbench.Main(*root, os.Getenv, os.Stderr)
}

// pairMain is "benchreport pair DIR" (scripts/pair.sh).
func pairMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchreport pair DIR   (DIR: collperf's collio-K.json, host-K.json, base-K.json)")
		return 2
	}
	return done(pair.Report(os.Stdout, args[0]))
}

// piecesMain is "benchreport pieces TSV MD" (scripts/pieces.sh): writes
// MD and prints it.
func piecesMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport pieces TSV MD")
		return 2
	}
	f, err := os.Open(args[0])
	if err != nil {
		return done(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if err := pieces.Report(&b, f); err != nil {
		return done(err)
	}
	if err := writeFile(args[1], b.Bytes()); err != nil {
		return done(err)
	}
	_, err = os.Stdout.Write(b.Bytes())
	return done(err)
}

// syscallcostMain is "benchreport syscallcost -np N DIR MODE..."
// (scripts/syscallcost.sh).
func syscallcostMain(args []string) int {
	fs := flag.NewFlagSet("syscallcost", flag.ContinueOnError)
	np := fs.Int("np", 4, "ranks per launch")
	if err := fs.Parse(args); err != nil || fs.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport syscallcost -np N DIR MODE...")
		return 2
	}
	return done(syscallcost.Report(os.Stdout, fs.Arg(0), *np, fs.Args()[1:]))
}

func done(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		return 1
	}
	return 0
}
