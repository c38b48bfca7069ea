// Package e2e holds collio's end-to-end tests under MPI: programs that
// open, write and read files through the public API on every rank of an
// MPI job, and compare the files byte for byte with what the host MPI-IO
// writes for the same program (host_equality_test.go) or with the bytes
// every rank must find, and the errors with what every rank must return
// (faults, a full disk, mismatched calls, overflowing offsets). The package
// has no code of its own; its TestMain is mpirunner.Main.
//
// Run it under mpirun from the repository's root (make test-mpi runs it at
// 4 and 3 ranks):
//
//	MPI_NP=4 go test -count=1 -p 1 -exec $PWD/scripts/mpiexec.sh ./e2e
//
// Plain go test ./e2e runs the tests as a 1-rank MPI singleton; without
// cgo there are none.
package e2e
