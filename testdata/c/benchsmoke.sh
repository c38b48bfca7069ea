#!/bin/bash
# Smoke test of the C benchmarks (make test-c):
#   testdata/c/benchsmoke.sh LIBCOLLIO BUILDDIR
# Compiles bench/c/collperf.c and bench/c/callcost.c with plain mpicc
# (-O2 -Wall -Werror), and runs each once on the host MPI-IO and once with
# LIBCOLLIO preloaded, on 2 ranks with tiny sizes: each run must exit 0 and
# print its result line with verified=yes, and the preloaded run must have
# opened its file through collio (COLLIO_VERBOSE=1). A few seconds.
set -u
lib=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../bench/c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpirun="timeout -k 5 60 mpirun -q -np 2"
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

mkdir -p "$build"
for p in collperf callcost; do
	mpicc -O2 -Wall -Werror -o "$build/$p" "$src/$p.c" -lm || fail "compile bench/c/$p.c"
done
[ $failed = 0 ] || exit 1

out=$(mktemp -d "${TMPDIR:-/tmp}/collio-cbench.XXXXXX")
trap 'rm -rf "$out"' EXIT
for p in collperf callcost; do
	case $p in
	collperf) args=(-n 16 -r 3 -f "$out/collperf.dat") ;;
	callcost) args=(-c 8 -b 4k -f "$out/callcost.dat" -H cb_buffer_size=1m) ;;
	esac
	for mode in host preload; do
		pre=()
		[ $mode = preload ] && pre=(-x LD_PRELOAD="$lib" -x COLLIO_VERBOSE=1)
		# shellcheck disable=SC2086 # $mpirun is a word list
		line=$($mpirun ${pre[@]+"${pre[@]}"} "$build/$p" "${args[@]}" 2>"$out/$p.$mode.err")
		rc=$?
		if [ $rc != 0 ]; then
			cat "$out/$p.$mode.err"
			fail "$p ($mode) exited with $rc"
		elif ! grep -q "^$p .*verified=yes" <<<"$line"; then
			echo "$line"
			fail "$p ($mode): no verified result line"
		elif [ $mode = preload ] && ! grep -q 'MPI_File_open -> collio' "$out/$p.$mode.err"; then
			cat "$out/$p.$mode.err"
			fail "$p ($mode): COLLIO_VERBOSE shows no open served by collio"
		else
			echo "ok   $p ($mode): $line"
		fi
	done
done
[ $failed = 0 ] && echo "PASS: C benchmark smoke test (2 ranks)"
exit $failed
