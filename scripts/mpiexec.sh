#!/bin/sh
# Runs a program (typically a go test binary, through go test -exec) on
# MPI_NP ranks (default 4):
#   MPI_NP=4 go test -p 1 -exec "$PWD/scripts/mpiexec.sh" ./internal/mpi/
# MPIRUN_TIMEOUT=<seconds> makes mpirun kill a stuck job (exit code 110).
# mpirun runs with -q, which drops its multi-line "job aborted / process
# returned a non-zero exit code" banners (mpirunner already names the failing
# ranks) but also its "rank N exited on signal S" note: set MPIRUN_VERBOSE=1
# to get those back when chasing a crash. Exit codes are the same either way.
quiet=-q
[ -n "$MPIRUN_VERBOSE" ] && quiet=
exec mpirun --allow-run-as-root --oversubscribe $quiet ${MPIRUN_TIMEOUT:+--timeout $MPIRUN_TIMEOUT} -np "${MPI_NP:-4}" "$@"
