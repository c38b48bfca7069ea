//go:build ignore

// gen_file_xfer writes file_xfer.c from internal/xfergen's table: go
// generate in this directory runs it.
package main

import (
	"log"
	"os"

	"github.com/collio/collio/cmd/libcollio/internal/xfergen"
)

func main() {
	if err := os.WriteFile("file_xfer.c", xfergen.Source(), 0o644); err != nil {
		log.Fatal(err)
	}
}
