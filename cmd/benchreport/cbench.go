package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/collio/collio/cmd/benchreport/internal/cbench"
)

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
