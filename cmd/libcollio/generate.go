//go:build cgo

package main

// file_xfer.c is generated (TestFileXferGenerated checks it is current).
//go:generate go run gen_file_xfer.go
