// Package soak holds collio's soak test (soak_test.go) and nothing else:
// many collective calls on the in-memory communicator with random views,
// strategies, hints and injected faults, checked against the independent
// reference expander (internal/refmodel), with memory, goroutines and
// open descriptors measured at the start and at the end.
//
// `go test ./internal/soak/` runs a short version (300 calls); `make soak`
// runs 10,000. Environment:
//
//	COLLIO_SOAK_CALLS  collective calls to make (default 300)
//	COLLIO_SOAK_SEED   the random seed (default 1); a failure prints it
//
// See docs/testing.md.
package soak
