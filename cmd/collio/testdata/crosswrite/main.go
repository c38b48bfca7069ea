// Command crosswrite is run under mpirun by TestCrossingBytesUnderMpirun:
// every rank writes its block of a 2-D array, the ranks shuffled over the
// process grid as collio place -grid -shuffle does, with one collective
// two-phase write (ROMIO's even file domains), and prints the data bytes
// it sent to ranks on other nodes (metrics.Call.CrossNodeBytes) and its
// host. NODESIZE, when given, is the collio_node_size hint (virtual nodes
// of consecutive ranks instead of the hosts).
//
//	crosswrite FILE ROWS COLS PROCROWS PROCCOLS SEED [NODESIZE]
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"

	"github.com/collio/collio"
	"github.com/collio/collio/cmd/collio/internal/place"
)

func init() { runtime.LockOSThread() } // MPI wants its calls on the main thread

func main() {
	world, err := collio.World()
	if err == nil {
		err = write(world, os.Args[1:])
		if ferr := collio.Finalize(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosswrite:", err)
		os.Exit(1)
	}
}

func write(world collio.Comm, args []string) error {
	if len(args) != 6 && len(args) != 7 {
		return fmt.Errorf("usage: crosswrite FILE ROWS COLS PROCROWS PROCCOLS SEED [NODESIZE]")
	}
	n := make([]int, 6)
	for i, a := range args[1:] {
		v, err := strconv.Atoi(a)
		if err != nil {
			return fmt.Errorf("argument %q: %v", a, err)
		}
		n[i] = v
	}
	g := place.Grid{Sizes: []int{n[0], n[1]}, Procs: []int{n[2], n[3]}, Elem: 8}
	if g.Ranks() != world.Size() {
		return fmt.Errorf("a %dx%d grid for %d ranks", n[2], n[3], world.Size())
	}
	if n[4] != 0 {
		g.Order = rand.New(rand.NewPCG(uint64(n[4]), 0)).Perm(g.Ranks())
	}
	acc, err := g.Accesses()
	if err != nil {
		return err
	}
	h := collio.Hints{"collio_strategy": "twophase", "collio_file_domains": "even", "romio_cb_write": "enable"}
	if n[5] > 0 {
		h["collio_node_size"] = strconv.Itoa(n[5])
	}
	f, err := collio.Open(world, args[0], collio.ModeCreate|collio.ModeWrOnly, h)
	if err != nil {
		return err
	}
	me := acc[world.Rank()]
	if err := f.SetView(0, collio.Byte, me.Filetype, nil); err != nil {
		return err
	}
	if _, err := f.WriteAtAll(make([]byte, me.Size), 0); err != nil {
		return err
	}
	last, _ := f.Stats()
	host, _ := os.Hostname()
	fmt.Printf("crosswrite: rank %d host %s vhost %s aggregators %v cross %d\n", world.Rank(), host,
		os.Getenv("COLLIO_VHOST"), f.Aggregators(), last.CrossNodeBytes)
	return f.Close()
}
