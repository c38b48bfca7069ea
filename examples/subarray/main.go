// Command subarray writes a 2-D array of float64 distributed in row blocks
// over the ranks, each rank's block described by a subarray file view.
//
//	mpirun -np 4 go run ./examples/subarray /tmp/array.dat
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"

	"github.com/collio/collio"
)

func init() { runtime.LockOSThread() } // MPI wants its calls on the main thread

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(path string) error {
	world, err := collio.World() // initialises MPI if the program has not
	if err != nil {
		return err
	}
	defer collio.Finalize()
	rank, size := world.Rank(), world.Size()

	const rows, cols = 100, 64 // the global array
	myRows := rows / size
	start := rank * myRows
	if rank == size-1 {
		myRows = rows - start // the last rank takes the remainder
	}

	f, err := collio.Open(world, path, collio.ModeCreate|collio.ModeWrOnly,
		collio.Hints{"romio_ds_write": "enable"})
	if err != nil {
		return err
	}
	block, err := collio.Subarray([]int{rows, cols}, []int{myRows, cols}, []int{start, 0},
		collio.OrderC, collio.Float64)
	if err != nil {
		return err
	}
	if err := f.SetView(0, collio.Float64, block, nil); err != nil {
		return err
	}
	data := make([]byte, 8*myRows*cols)
	for i := range myRows * cols {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(float64(start*cols+i)))
	}
	if _, err := f.WriteAtAll(data, 0); err != nil { // collective: same error on every rank
		return err
	}
	return f.Close()
}
