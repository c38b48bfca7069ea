//go:build cgo

package main

import (
	"os"
	"testing"

	"github.com/collio/collio/cmd/libcollio/internal/xfergen"
)

// file_xfer.c is what internal/xfergen writes from its table.
func TestFileXferGenerated(t *testing.T) {
	got, err := os.ReadFile("file_xfer.c")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(xfergen.Source()) {
		t.Fatal("file_xfer.c is stale: run go generate ./cmd/libcollio")
	}
}
