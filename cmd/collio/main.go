// Command collio holds collio's maintenance tools.
//
//	collio recover [-n] [-force] DIR...
//	collio place -nodes N -cores-per-node C PATTERN [options]
//	collio sim [options]
//
// place maps the ranks of a collective write onto nodes (SetMatch,
// package place), writes an Open MPI rankfile and reports the bytes that
// cross nodes under byslot, bynode and SetMatch.
//
// sim is a scale model with time: it runs two-phase, segment or TAM on
// thousands of in-memory ranks placed on nodes (byslot, bynode, SetMatch),
// counts their messages per phase and applies a network and storage
// model (package simmodel).
//
// recover completes global files after a crash from the E10 caches in each
// DIR (the e10_cache_path of the job): every cache journal that a running
// process does not hold lists the writes that may exist only in its cache
// file; they are copied to the global file the journal names, the global
// file is synced, and the cache file and journal are removed (or, for a
// cache opened with e10_cache_discard_flag=disable, the cache file is kept
// and the journal emptied). Run it on every node that ran ranks, after the
// job ended. -n lists what would be copied; -force copies even into a
// global file that was replaced (another inode) since the journal was
// written. A journal is used only if it is a regular file of this user (other
// users' journals are skipped) that names the cache file beside it; only
// that cache file is ever deleted. The exit status is 1 if any journal
// could not be recovered or was refused.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/collio/collio/cache"

	_ "github.com/collio/collio/driver/beegfs"
	_ "github.com/collio/collio/driver/lustre"
	_ "github.com/collio/collio/driver/sim"
	_ "github.com/collio/collio/driver/ufs"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: collio recover [-n] [-force] DIR...
       collio place -nodes N -cores-per-node C PATTERN [options]
       collio sim [options]

recover copies to their global files the writes that E10 cache journals
in DIR (an e10_cache_path) list as not synced, after a crash.
place maps ranks onto nodes for collective writes (SetMatch) and writes
an Open MPI rankfile; collio place -h lists its options.
sim models the time of collective writes at scale on in-memory ranks;
collio sim -h lists its options.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "recover":
		return recoverCmd(args[1:], stdout, stderr)
	case "place":
		return placeCmd(args[1:], stdout, stderr)
	case "sim":
		return simCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "collio: unknown command %q\n%s", args[0], usage)
	return 2
}

func recoverCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("recover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dry := fs.Bool("n", false, "list what would be copied, copy nothing")
	force := fs.Bool("force", false, "copy even into a global file replaced since the journal was written")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	status := 0
	for _, dir := range fs.Args() {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "collio recover: %s is not a directory\n", dir)
			status = 1
			continue
		}
		res, err := cache.Recover(dir, cache.RecoverOptions{DryRun: *dry, Force: *force})
		if len(res) == 0 && err == nil {
			fmt.Fprintf(stdout, "%s: no cache journals\n", dir)
		}
		for _, r := range res {
			fmt.Fprintf(stdout, "%s: %s (%d writes, %d bytes) -> %s\n", r.Journal, r.Status, r.Extents, r.Bytes, r.Global)
		}
		if err != nil {
			fmt.Fprintf(stderr, "collio recover: %v\n", err)
			status = 1
		}
	}
	return status
}
