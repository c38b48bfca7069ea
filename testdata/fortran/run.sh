#!/bin/bash
# Runs collio's Fortran tests (part of make test-c):
#   testdata/fortran/run.sh PREFIX BUILDDIR
# PREFIX is a collio installation (make install PREFIX=...).
#
# fbasic.F90 is built twice, with mpif.h (-DUSE_MPIF_H) and with `use mpi`,
# and ff08.f90 with `use mpi_f08` when the host has it; each is linked
# plainly with mpifort and with $(pkg-config --libs collio). Each program
# runs on 4 and 3 ranks (NPS) three times: with the host MPI-IO, linked
# with libcollio, and as the plain binary with mpirun -x LD_PRELOAD. The
# programs check their own data; the files of the collio runs must be
# byte-identical to the host's. COLLIO_EXPECT makes each run fail unless
# the expected implementation served it (only collio reports collio_*
# hints). foverflow checks that offsets whose byte positions overflow fail
# with MPI_ERR_ARG; the host MPI-IO writes them at wrapped offsets, so it
# runs under collio only (mpif.h and `use mpi` preloaded, `use mpi` linked).
# Then fbasic runs preloaded with COLLIO_STATS=path and
# COLLIO_VERBOSE=1: the JSON report of darray.dat must count its collective
# write and read, and the Fortran calls must show up as served by collio.
# MPIRUN replaces mpirun and CTEST_DIR is where the files go (default
# TMPDIR), as for the C tests.
set -u
prefix=$1
build=$2
nps=${NPS:-4 3}
here=$(cd "$(dirname "$0")" && pwd)
lib=$prefix/lib/libcollio.so
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

if ! command -v mpifort >/dev/null 2>&1 || ! command -v gfortran >/dev/null 2>&1; then
	echo "FAIL: no mpifort/gfortran (scripts/ensure-deps.sh installs gfortran)"
	exit 1
fi
mkdir -p "$build/mod"
fflags="-O1 -Wall -Werror -J $build/mod"
progs="fbasic.fh fbasic.mod"
mpifort $fflags -DUSE_MPIF_H -o "$build/fbasic.fh.host" "$here/fbasic.F90" || fail "compile fbasic (mpif.h)"
mpifort $fflags -DUSE_MPIF_H -o "$build/fbasic.fh.collio" "$here/fbasic.F90" $(pkg-config --libs collio) ||
	fail "compile fbasic (mpif.h) against collio"
mpifort $fflags -o "$build/fbasic.mod.host" "$here/fbasic.F90" || fail "compile fbasic (use mpi)"
mpifort $fflags -o "$build/fbasic.mod.collio" "$here/fbasic.F90" $(pkg-config --libs collio) ||
	fail "compile fbasic (use mpi) against collio"
mpifort $fflags -DUSE_MPIF_H -o "$build/foverflow.fh.host" "$here/foverflow.F90" || fail "compile foverflow (mpif.h)"
mpifort $fflags -o "$build/foverflow.mod.host" "$here/foverflow.F90" || fail "compile foverflow (use mpi)"
mpifort $fflags -o "$build/foverflow.mod.collio" "$here/foverflow.F90" $(pkg-config --libs collio) ||
	fail "compile foverflow (use mpi) against collio"
if printf 'program p\nuse mpi_f08\nend program p\n' >"$build/f08probe.f90" &&
	mpifort -J "$build/mod" -o "$build/f08probe" "$build/f08probe.f90" 2>/dev/null; then
	progs="$progs ff08"
	mpifort $fflags -o "$build/ff08.host" "$here/ff08.f90" || fail "compile ff08"
	mpifort $fflags -o "$build/ff08.collio" "$here/ff08.f90" $(pkg-config --libs collio) || fail "compile ff08 against collio"
else
	echo "skip ff08: this MPI has no mpi_f08 module"
fi
[ $failed = 0 ] || exit 1

out=$(mktemp -d "${CTEST_DIR:-${TMPDIR:-/tmp}}/collio-fortran.XXXXXX")
trap 'rm -rf "$out"' EXIT
for np in $nps; do
	mpirun="timeout -k 5 60 ${MPIRUN:-mpirun} -q -np $np"
	for t in $progs; do
		before=$failed
		failed=0
		for mode in host linked preload; do
			d="$out/$t.$np.$mode"
			mkdir -p "$d"
			case $mode in
			host) COLLIO_EXPECT=0 $mpirun -x COLLIO_EXPECT "$build/$t.host" "$d" ;;
			linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/$t.collio" "$d" ;;
			preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/$t.host" "$d" ;;
			esac >"$d.out" 2>&1
			rc=$?
			[ $rc = 0 ] || { cat "$d.out"; fail "$t ($mode, np $np) exited with $rc"; continue; }
			[ $mode = host ] && continue
			for f in "$out/$t.$np.host"/*; do
				name=$(basename "$f")
				cmp -s "$f" "$d/$name" || fail "$t ($mode, np $np): $name differs from the host MPI-IO's"
			done
			n=$(ls "$d" | wc -l)
			[ "$n" = "$(ls "$out/$t.$np.host" | wc -l)" ] ||
				fail "$t ($mode, np $np): wrote $n files, the host MPI-IO $(ls "$out/$t.$np.host" | wc -l)"
		done
		[ $failed = 0 ] &&
			echo "ok   $t (np $np): host, linked and preloaded runs wrote identical files ($(ls "$out/$t.$np.host" | tr '\n' ' '))"
		[ $before = 0 ] || failed=1
	done
done

# foverflow: collio only (the host MPI-IO wraps the offsets: nothing to
# compare).
for np in $nps; do
	mpirun="timeout -k 5 60 ${MPIRUN:-mpirun} -q -np $np"
	before=$failed
	failed=0
	for mode in fh.preload mod.preload mod.linked; do
		d="$out/foverflow.$np.$mode"
		mkdir -p "$d"
		case $mode in
		*.preload) $mpirun -x LD_PRELOAD="$lib" "$build/foverflow.${mode%.preload}.host" "$d" ;;
		mod.linked) $mpirun "$build/foverflow.mod.collio" "$d" ;;
		esac >"$d.out" 2>&1
		rc=$?
		[ $rc = 0 ] || { cat "$d.out"; fail "foverflow ($mode, np $np) exited with $rc"; }
	done
	[ $failed = 0 ] && echo "ok   foverflow (np $np): offsets past 2^63-1 bytes fail with MPI_ERR_ARG (mpif.h and use mpi, preloaded and linked)"
	[ $before = 0 ] || failed=1
done

# COLLIO_STATS and COLLIO_VERBOSE from a preloaded mpif.h program.
np=${nps%% *}
d="$out/stats"
mkdir -p "$d"
COLLIO_STATS="$d/stats.json" COLLIO_VERBOSE=1 timeout -k 5 60 ${MPIRUN:-mpirun} -q -np "$np" -x COLLIO_STATS -x COLLIO_VERBOSE \
	-x LD_PRELOAD="$lib" "$build/fbasic.fh.host" "$d" >"$d.out" 2>&1
rc=$?
if [ $rc != 0 ]; then
	cat "$d.out"
	fail "fbasic (COLLIO_STATS, preloaded) exited with $rc"
else
	python3 - "$d/stats.json" "$d/darray.dat" "$np" <<'EOF' || fail "fbasic: the COLLIO_STATS report is wrong"
import json, sys
path, data, np = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [json.loads(line) for line in open(path)]
# The collective open of every rank, then rank 0's alone to check the file.
rep = [d for d in docs if d["path"] == data]
assert [d["ranks"] for d in rep] == [np, 1], f"reports of {data}: {[(d['path'], d['ranks']) for d in docs]}"
r = rep[0]
assert rep[1]["independent_read"]["calls"]["sum"] == 1, rep[1]["independent_read"]
assert r["collective_write"]["calls"]["max"] == 1, r["collective_write"]
assert r["collective_read"]["calls"]["max"] == 1, r["collective_read"]
assert r["collective_write"]["bytes"]["sum"] == 4 * 10 * 7, r["collective_write"]["bytes"]
EOF
	for call in MPI_File_open MPI_File_set_view MPI_File_write_all MPI_File_read_all MPI_File_write_at_all \
		MPI_File_iwrite MPI_File_iread_at MPI_File_get_info MPI_File_set_errhandler MPI_File_delete MPI_File_close; do
		grep -q "^collio\[0\]: $call -> collio\$" "$d.out" || fail "fbasic: COLLIO_VERBOSE shows no $call served by collio"
	done
	[ "$(grep -c '^collio\[[0-9]*\]: MPI_Finalize -> collio' "$d.out")" = "$np" ] ||
		fail "fbasic: Fortran's MPI_Finalize did not reach collio on every rank"
	[ $failed = 0 ] && echo "ok   fbasic: COLLIO_STATS=path report and COLLIO_VERBOSE from Fortran calls (preloaded)"
fi

exit $failed
