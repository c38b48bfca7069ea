// Command quickstart writes one shared file collectively: rank r writes the
// 16 bytes "rank          r\n" at offset 16r.
//
//	go build -o quickstart ./examples/quickstart && mpirun -np 4 ./quickstart /tmp/out.dat
package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/collio/collio"
)

func init() { runtime.LockOSThread() } // MPI wants its calls on the main thread

func main() {
	world, err := collio.World() // initialises MPI if the program has not
	if err == nil {
		err = write(world, os.Args[1])
		if ferr := collio.Finalize(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func write(world collio.Comm, path string) error {
	f, err := collio.Open(world, path, collio.ModeCreate|collio.ModeWrOnly, collio.Hints{"cb_buffer_size": "4m"})
	if err != nil {
		return err
	}
	line := fmt.Appendf(nil, "rank %10d\n", world.Rank())                 // 16 bytes
	if _, err := f.WriteAtAll(line, 16*int64(world.Rank())); err != nil { // collective: same error on every rank
		return err
	}
	return f.Close()
}
