#!/bin/bash
# Runs collio's C tests (make test-c):
#   testdata/c/run.sh PREFIX BUILDDIR
# PREFIX is a collio installation (make install PREFIX=...): the programs
# are compiled with `cc $(pkg-config --cflags --libs collio)` against it,
# which also tests the installed header, library and pkg-config file.
#
# Each of basic, misc, nonblocking and shared runs three times on NP ranks
# (default 4): with the host MPI-IO, linked with libcollio, and as the plain
# binary with mpirun -x LD_PRELOAD=libcollio.so. The files each run writes
# must be byte-identical to the host MPI-IO's. capi (collio.h, hints config,
# pass-through, COLLIO_VERBOSE) runs linked only.
set -u
prefix=$1
build=$2
np=${NP:-4}
here=$(cd "$(dirname "$0")" && pwd)
lib=$prefix/lib/libcollio.so
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpirun="timeout -k 5 60 mpirun -q -np $np"
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

mkdir -p "$build"
cflags="-O1 -Wall -Werror"
for t in basic misc nonblocking shared; do
	mpicc $cflags -o "$build/$t.host" "$here/$t.c" -ldl || fail "compile $t"
	cc $cflags -o "$build/$t.collio" "$here/$t.c" $(pkg-config --cflags --libs collio) -ldl || fail "compile $t against collio"
done
cc $cflags -o "$build/capi" "$here/capi.c" $(pkg-config --cflags --libs collio) -ldl || fail "compile capi"
[ $failed = 0 ] || exit 1

out=$(mktemp -d "${TMPDIR:-/tmp}/collio-c.XXXXXX")
trap 'rm -rf "$out"' EXIT
for t in basic misc nonblocking shared; do
	before=$failed
	failed=0
	for mode in host linked preload; do
		mkdir -p "$out/$t.$mode"
		case $mode in
		host) COLLIO_EXPECT=0 $mpirun -x COLLIO_EXPECT "$build/$t.host" "$out/$t.$mode" ;;
		linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/$t.collio" "$out/$t.$mode" ;;
		preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/$t.host" "$out/$t.$mode" ;;
		esac
		rc=$?
		[ $rc = 0 ] || { fail "$t ($mode) exited with $rc"; continue; }
		[ $mode = host ] && continue
		for f in "$out/$t.host"/*; do
			name=$(basename "$f")
			cmp -s "$f" "$out/$t.$mode/$name" || fail "$t ($mode): $name differs from the host MPI-IO's"
		done
		n=$(ls "$out/$t.$mode" | wc -l)
		[ "$n" = "$(ls "$out/$t.host" | wc -l)" ] || fail "$t ($mode): wrote $n files, the host MPI-IO $(ls "$out/$t.host" | wc -l)"
	done
	[ $failed = 0 ] && echo "ok   $t: host, linked and preloaded runs wrote identical files ($(ls "$out/$t.host" | tr '\n' ' '))"
	[ $before = 0 ] || failed=1
done

# capi, with COLLIO_VERBOSE=1: its stderr shows which calls went where.
mkdir -p "$out/capi"
COLLIO_VERBOSE=1 $mpirun -x COLLIO_VERBOSE "$build/capi" "$out/capi" 2>"$out/capi.err"
rc=$?
[ $rc = 0 ] || { cat "$out/capi.err"; fail "capi exited with $rc"; }
grep -q 'MPI_File_open -> host MPI-IO' "$out/capi.err" || fail "capi: COLLIO_VERBOSE shows no pass-through open"
grep -q 'MPI_File_write_at_all -> host MPI-IO' "$out/capi.err" || fail "capi: COLLIO_VERBOSE shows no pass-through write"
grep -q 'MPI_File_read_at -> collio' "$out/capi.err" || fail "capi: COLLIO_VERBOSE shows no collio read"
grep -q 'warning: COLLIO_HINTS_CONFIG=.*bad.json ignored' "$out/capi.err" || fail "capi: no warning about the malformed config"
[ "$(grep -c 'warning: COLLIO_HINTS_CONFIG=' "$out/capi.err")" = 1 ] || fail "capi: the config warning is not printed exactly once"
[ $rc = 0 ] && echo "ok   capi: collio.h API, hints config, pass-through, COLLIO_VERBOSE"

# Preloading into mpirun's ranks must not disturb a program without file I/O.
if ! $mpirun -x LD_PRELOAD="$lib" /bin/true; then
	fail "LD_PRELOAD into /bin/true"
fi

[ $failed = 0 ] && echo "PASS: C tests ($np ranks)"
exit $failed
