#!/bin/bash
# Runs collio's C tests (make test-c):
#   testdata/c/run.sh PREFIX BUILDDIR
# PREFIX is a collio installation (make install PREFIX=...): the programs
# are compiled with `cc $(pkg-config --cflags --libs collio)` against it,
# which also tests the installed header, library and pkg-config file.
#
# Each of basic, misc, nonblocking, shared and e10 runs three times on NP
# ranks (default 4): with the host MPI-IO, linked with libcollio, and as the
# plain binary with mpirun -x LD_PRELOAD=libcollio.so; nonblocking a fourth
# time preloaded with COLLIO_THREAD_MULTIPLE=0 (serial: below
# MPI_THREAD_MULTIPLE its transfers run inside their start calls). The files each run
# writes must be byte-identical to the host MPI-IO's. capi (collio.h, hints
# config, pass-through, COLLIO_VERBOSE) and e10's failing deferred close run
# linked only, e10 without files and with planted cache files preloaded
# only. ioserver (I/O server ranks
# through collio.h) runs linked. stats checks the per-file
# report of COLLIO_STATS (text preloaded, JSON linked; statscheck.py);
# cpuprofile the per-rank profiles of COLLIO_CPU_PROFILE (preloaded).
# errors checks error codes (MPI_Error_class everywhere, collio's message in
# MPI_Error_string under collio) and error handlers, MPI_ERRORS_ARE_FATAL
# in a run of its own. overflow checks that offsets whose byte positions
# overflow fail with MPI_ERR_ARG; the host MPI-IO writes them at wrapped
# offsets, so it runs under collio only (linked, preloaded, and preloaded
# with COLLIO_FAST_LANE=0).
set -u
prefix=$1
build=$2
np=${NP:-4}
here=$(cd "$(dirname "$0")" && pwd)
lib=$prefix/lib/libcollio.so
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpirun="timeout -k 5 60 ${MPIRUN:-mpirun} -q -np $np"
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

# host_mpirun is the mpirun of test $1's host MPI-IO run: plain mpirun on
# this machine for the tests named in CTEST_HOST_ONE_NODE, whose host
# MPI-IO is wrong across nodes (OMPIO's shared file pointers), else $mpirun.
host_mpirun() {
	case " ${CTEST_HOST_ONE_NODE:-} " in
	*" $1 "*) echo "timeout -k 5 60 mpirun -q -np $np" ;;
	*) echo "$mpirun" ;;
	esac
}

mkdir -p "$build"
cflags="-O1 -Wall -Werror"
for t in basic misc nonblocking shared e10; do
	mpicc $cflags -o "$build/$t.host" "$here/$t.c" -ldl || fail "compile $t"
	cc $cflags -o "$build/$t.collio" "$here/$t.c" $(pkg-config --cflags --libs collio) -ldl || fail "compile $t against collio"
done
cc $cflags -o "$build/capi" "$here/capi.c" $(pkg-config --cflags --libs collio) -ldl || fail "compile capi"
cc $cflags -o "$build/ioserver" "$here/ioserver.c" $(pkg-config --cflags --libs collio) -ldl || fail "compile ioserver"
mpicc $cflags -o "$build/errors.host" "$here/errors.c" -ldl -lpthread || fail "compile errors"
cc $cflags -o "$build/errors.collio" "$here/errors.c" $(pkg-config --cflags --libs collio) -ldl -lpthread ||
	fail "compile errors against collio"
mpicc $cflags -o "$build/overflow.host" "$here/overflow.c" -ldl || fail "compile overflow"
cc $cflags -o "$build/overflow.collio" "$here/overflow.c" $(pkg-config --cflags --libs collio) -ldl ||
	fail "compile overflow against collio"
mpicc $cflags -o "$build/lane.host" "$here/lane.c" -ldl -lpthread || fail "compile lane"
cc $cflags -DT_LINKED -o "$build/lane.collio" "$here/lane.c" $(pkg-config --cflags --libs collio) -ldl -lpthread ||
	fail "compile lane against collio"
mpicc $cflags -o "$build/stats.host" "$here/stats.c" -ldl || fail "compile stats"
cc $cflags -DT_LINKED -o "$build/stats.collio" "$here/stats.c" $(pkg-config --cflags --libs collio) -ldl ||
	fail "compile stats against collio"
[ $failed = 0 ] || exit 1

out=$(mktemp -d "${CTEST_DIR:-${TMPDIR:-/tmp}}/cc.XXXXXX") # short: errors.c finds text after the path in 256 bytes
trap 'rm -rf "$out"' EXIT
for t in basic misc nonblocking shared e10; do
	before=$failed
	failed=0
	modes="host linked preload" also=""
	[ $t = nonblocking ] && modes="$modes serial" also=", and preloaded with COLLIO_THREAD_MULTIPLE=0,"
	for mode in $modes; do
		mkdir -p "$out/$t.$mode"
		case $mode in
		host) COLLIO_EXPECT=0 $(host_mpirun $t) -x COLLIO_EXPECT "$build/$t.host" "$out/$t.$mode" ;;
		linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/$t.collio" "$out/$t.$mode" ;;
		preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/$t.host" "$out/$t.$mode" ;;
		serial) # below MPI_THREAD_MULTIPLE: transfers run inside their start calls
			COLLIO_EXPECT=1 COLLIO_THREAD_MULTIPLE=0 $mpirun -x COLLIO_EXPECT -x COLLIO_THREAD_MULTIPLE \
				-x LD_PRELOAD="$lib" "$build/$t.host" "$out/$t.$mode" ;;
		esac
		rc=$?
		[ $rc = 0 ] || { fail "$t ($mode) exited with $rc"; continue; }
		# Across nodes OMPIO keeps its shared file pointer in a lock file
		# beside the data (sharedfp lockedfile), and leaves it there.
		[ $mode = host ] && rm -f "$out/$t.host"/*.lock
		[ $mode = host ] && continue
		for f in "$out/$t.host"/*; do
			name=$(basename "$f")
			cmp -s "$f" "$out/$t.$mode/$name" || fail "$t ($mode): $name differs from the host MPI-IO's"
		done
		n=$(ls "$out/$t.$mode" | wc -l)
		[ "$n" = "$(ls "$out/$t.host" | wc -l)" ] || fail "$t ($mode): wrote $n files, the host MPI-IO $(ls "$out/$t.host" | wc -l)"
	done
	[ $failed = 0 ] && echo "ok   $t: host, linked and preloaded runs$also wrote identical files ($(ls "$out/$t.host" | tr '\n' ' '))"
	[ $before = 0 ] || failed=1
done

# lane: small transfers served in C by the fast lane. Linked, with the lane
# and with COLLIO_FAST_LANE=0 (the program checks collio_file_stats), and
# preloaded; the files must equal the host MPI-IO's (big.dat, a write the
# file size limit refuses, is collio's only).
before=$failed
failed=0
for mode in host linked nolane preload; do
	mkdir -p "$out/lane.$mode"
	case $mode in
	host) COLLIO_EXPECT=0 $mpirun -x COLLIO_EXPECT "$build/lane.host" "$out/lane.$mode" ;;
	linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/lane.collio" "$out/lane.$mode" ;;
	nolane) COLLIO_EXPECT=1 COLLIO_FAST_LANE=0 $mpirun -x COLLIO_EXPECT -x COLLIO_FAST_LANE "$build/lane.collio" "$out/lane.$mode" ;;
	preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/lane.host" "$out/lane.$mode" ;;
	esac >"$out/lane.$mode.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$out/lane.$mode.out"; fail "lane ($mode) exited with $rc"; continue; }
	[ $mode = host ] && continue
	for name in cbd.dat auto.dat; do
		cmp -s "$out/lane.host/$name" "$out/lane.$mode/$name" || fail "lane ($mode): $name differs from the host MPI-IO's"
	done
done
[ $failed = 0 ] && echo "ok   lane: fast-lane transfers (linked, COLLIO_FAST_LANE=0, preloaded) equal the host MPI-IO's; counts, EFBIG"
[ $before = 0 ] || failed=1

# ioserver: collio_split_io_servers, linked.
mkdir -p "$out/ioserver"
if $mpirun "$build/ioserver" "$out/ioserver"; then
	echo "ok   ioserver: one I/O server rank; collio_open and MPI_File_open on the compute ranks, EIO at sync and close"
else
	fail "ioserver exited with $?"
fi

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

# errors: error classes with the host MPI-IO, linked and preloaded, and
# collio's messages in MPI_Error_string under collio; linked again with
# COLLIO_ERROR_CODES=0 (plain classes) and 4 (codes reused at once). Then
# MPI_ERRORS_ARE_FATAL: on MPI_FILE_NULL, an open of a missing file must
# abort the job with the class as exit status (MPI_ERR_NO_SUCH_FILE, 42) and
# (collio) print collio's message; likewise on a read-only file, a write
# (MPI_ERR_READ_ONLY, 45).
before=$failed
failed=0
for mode in host linked preload codes0 codes4; do
	d="$out/errors.$mode"
	mkdir -p "$d"
	case $mode in
	host) COLLIO_EXPECT=0 $mpirun -x COLLIO_EXPECT "$build/errors.host" "$d" ;;
	linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/errors.collio" "$d" ;;
	preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/errors.host" "$d" ;;
	codes0) COLLIO_ERROR_CODES=0 $mpirun -x COLLIO_ERROR_CODES "$build/errors.collio" "$d" ;;
	codes4) COLLIO_ERROR_CODES=4 $mpirun -x COLLIO_ERROR_CODES "$build/errors.collio" "$d" ;;
	esac >"$d.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$d.out"; fail "errors ($mode) exited with $rc"; }
done
grep -h '^errors: ' "$out/errors.linked.out"
for mode in host linked preload; do
	for f in open file; do
		d="$out/errors.fatal-$f.$mode"
		mkdir -p "$d"
		case $mode in
		host) $mpirun "$build/errors.host" "$d" fatal-$f ;;
		linked) $mpirun "$build/errors.collio" "$d" fatal-$f ;;
		preload) $mpirun -x LD_PRELOAD="$lib" "$build/errors.host" "$d" fatal-$f ;;
		esac >"$d.out" 2>&1
		rc=$?
		want=42 msg="MPI_File_open failed: collio: open $d/missing.dat (rank 0): no such file"
		[ $f = file ] && want=45 msg="MPI_File_write_at failed: collio: write_at $d/ro.dat (rank [0-9]*): file is read-only"
		if [ $rc != $want ]; then
			cat "$d.out"
			fail "errors fatal-$f ($mode) exited with $rc, want $want (the abort's error class)"
		elif [ $mode != host ] && ! grep -q "^collio\[[0-9]*\]: $msg" "$d.out"; then
			cat "$d.out"
			fail "errors fatal-$f ($mode): no message \"$msg\""
		fi
	done
done
[ $failed = 0 ] && echo "ok   errors: classes and handlers (host, linked, preloaded), collio's messages, COLLIO_ERROR_CODES=0 and 4, MPI_ERRORS_ARE_FATAL"
[ $before = 0 ] || failed=1

# overflow: offsets past 2^63-1 bytes. The host MPI-IO wraps them (it
# returns MPI_SUCCESS and writes at byte 8), so there is nothing to compare:
# collio only, linked, preloaded, and preloaded without the fast lane.
before=$failed
failed=0
for mode in linked preload nolane; do
	d="$out/overflow.$mode"
	mkdir -p "$d"
	case $mode in
	linked) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/overflow.collio" "$d" ;;
	preload) COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/overflow.host" "$d" ;;
	nolane) COLLIO_EXPECT=1 COLLIO_FAST_LANE=0 $mpirun -x COLLIO_EXPECT -x COLLIO_FAST_LANE -x LD_PRELOAD="$lib" \
		"$build/overflow.host" "$d" ;;
	esac >"$d.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$d.out"; fail "overflow ($mode) exited with $rc"; }
done
[ $failed = 0 ] && echo "ok   overflow: offsets past 2^63-1 bytes fail with MPI_ERR_ARG on every rank (linked, preloaded, no fast lane); the host MPI-IO wraps them"
[ $before = 0 ] || failed=1

# A switch variable with a value collio does not accept (a typo), preloaded:
# COLLIO_STATS, read in Go at open, and COLLIO_THREAD_MULTIPLE, read in C at
# MPI_Init. Every MPI_File_open fails with MPI_ERR_ARG naming the variable,
# the value and the accepted values (errors.c badenv); on stderr rank 0 says
# so once at MPI_Init and once at the first failed open (not once per rank
# or per open).
before=$failed
failed=0
for bad in COLLIO_STATS=ture COLLIO_THREAD_MULTIPLE=of; do
	name=${bad%%=*} value=${bad#*=}
	d="$out/errors.badenv.$name"
	mkdir -p "$d"
	env "$bad" $mpirun -x "$name" -x LD_PRELOAD="$lib" "$build/errors.host" "$d" badenv "$name" >"$d.out" 2>&1
	rc=$?
	want="$name=\"$value\" is not valid; accepted: "
	if [ $rc != 0 ]; then
		cat "$d.out"
		fail "errors badenv $bad exited with $rc"
	elif [ "$(grep -cF "collio: invalid argument: $want" "$d.out")" != 1 ] ||
		! grep -qF "; MPI_File_open fails until it is fixed" "$d.out" ||
		[ "$(grep -cF "collio: open $d/env.dat (rank 0): invalid argument: $want" "$d.out")" != 1 ] ||
		[ "$(grep -c "$name" "$d.out")" != 2 ]; then
		cat "$d.out"
		fail "errors badenv $bad: stderr does not say once at MPI_Init and once at the open that $name is bad"
	fi
done
[ $failed = 0 ] && echo "ok   errors badenv: a mistyped COLLIO_STATS or COLLIO_THREAD_MULTIPLE fails MPI_File_open, saying what is accepted"
[ $before = 0 ] || failed=1

# stats: COLLIO_STATS. The file must equal the host MPI-IO's; preloaded with
# COLLIO_STATS=1, rank 0's report on stderr names the file and the rank
# count, counts 5 collective writes of 448 KiB and 3,073 pieces per rank, and
# lists the strategies with their reasons; linked with COLLIO_STATS=path
# (%p: rank 0's pid), the same as one line of valid JSON (statscheck.py).
# The linked program checks collio_file_stats and collio_file_stats_all,
# also in a run without COLLIO_STATS.
before=$failed
failed=0
mkdir -p "$out/stats.host" "$out/stats.preload" "$out/stats.linked"
COLLIO_EXPECT=0 $mpirun -x COLLIO_EXPECT "$build/stats.host" "$out/stats.host" >/dev/null || fail "stats (host) exited with $?"
COLLIO_EXPECT=1 COLLIO_STATS=1 $mpirun -x COLLIO_EXPECT -x COLLIO_STATS -x LD_PRELOAD="$lib" "$build/stats.host" \
	"$out/stats.preload" >/dev/null 2>"$out/stats.err" || { cat "$out/stats.err"; fail "stats (preload) exited with $?"; }
COLLIO_EXPECT=1 COLLIO_STATS="$out/stats.%p.json" $mpirun -x COLLIO_EXPECT -x COLLIO_STATS "$build/stats.collio" \
	"$out/stats.linked" >/dev/null || fail "stats (linked) exited with $?"
# collio_file_stats counts without COLLIO_STATS too (and there is no report).
mkdir -p "$out/stats.nostats"
COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/stats.collio" "$out/stats.nostats" >/dev/null 2>"$out/stats.nostats.err" ||
	{ cat "$out/stats.nostats.err"; fail "stats (linked, no COLLIO_STATS) exited with $?"; }
grep -q 'collio stats' "$out/stats.nostats.err" && fail "stats: a report without COLLIO_STATS"
for mode in preload linked nostats; do
	cmp -s "$out/stats.host/stats.dat" "$out/stats.$mode/stats.dat" || fail "stats ($mode): stats.dat differs from the host MPI-IO's"
done
mib=$(awk -v n="$np" 'BEGIN { printf "%.2f", n * 448 / 1024 }')
for want in "^collio stats: $out/stats.preload/stats.dat\$" "^  $np ranks*, open to close [0-9.]* ms" \
	"^  collective writes  *5  *[0-9,]*  *$mib  *5  *3,073  *0\\.44\$" "^  collective reads  *1 " \
	"^  independent writes  *$np " \
	"^ *1  write_at_all  *independent  *1  *no interleaving between ranks" \
	"^ *1  write_at_all  *independent  *4  *romio_cb_write=disable" "^ *1  write_at_all  *[a-z]*  *5  *romio_cb_write=enable" \
	"^    file I/O  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*\$" "^    I/O not hidden "; do
	grep -q -- "$want" "$out/stats.err" || fail "stats: the COLLIO_STATS=1 report has no line matching '$want'"
done
[ "$(grep -c '^collio stats:' "$out/stats.err")" = 1 ] || fail "stats: not exactly one text report"
[ $failed = 0 ] || cat "$out/stats.err"
json=$(ls "$out"/stats.*.json 2>/dev/null)
if [ "$(wc -w <<<"$json")" != 1 ]; then
	fail "stats: COLLIO_STATS=$out/stats.%p.json wrote these files: $json"
elif ! python3 -m json.tool --json-lines "$json" >/dev/null; then
	fail "stats: $json is not valid JSON Lines"
elif ! python3 "$here/statscheck.py" "$json" "$np" "$out/stats.linked/stats.dat"; then
	fail "stats: the JSON report's counts are wrong"
fi
[ $failed = 0 ] && echo "ok   stats: COLLIO_STATS=1 report (preloaded), COLLIO_STATS=path JSON (linked)"
[ $before = 0 ] || failed=1

# cpuprofile: COLLIO_CPU_PROFILE=path (%p: each process's id) leaves one
# pprof CPU profile per rank, written at MPI_Finalize, that go tool pprof
# reads; a value without a '/' is refused on stderr and the run goes on.
before=$failed
failed=0
mkdir -p "$out/cpuprofile"
COLLIO_EXPECT=1 COLLIO_CPU_PROFILE="$out/cpuprofile/cpu.%p.pprof" $mpirun -x COLLIO_EXPECT -x COLLIO_CPU_PROFILE \
	-x LD_PRELOAD="$lib" "$build/stats.host" "$out/cpuprofile" >/dev/null 2>"$out/cpuprofile.err" ||
	{ cat "$out/cpuprofile.err"; fail "cpuprofile (preload) exited with $?"; }
profiles=$(ls "$out"/cpuprofile/cpu.*.pprof 2>/dev/null)
if [ "$(wc -w <<<"$profiles")" != "$np" ]; then
	fail "cpuprofile: want $np profiles, got: $profiles"
else
	for p in $profiles; do
		gzip -t "$p" 2>/dev/null || fail "cpuprofile: $p is not a gzipped profile"
	done
	p=$(head -n 1 <<<"$profiles")
	${GO:-go} tool pprof -raw "$lib" "$p" >/dev/null 2>&1 || fail "cpuprofile: go tool pprof cannot read $p"
fi
COLLIO_EXPECT=1 COLLIO_CPU_PROFILE=on $mpirun -x COLLIO_EXPECT -x COLLIO_CPU_PROFILE -x LD_PRELOAD="$lib" \
	"$build/stats.host" "$out/cpuprofile" >/dev/null 2>"$out/cpuprofile.bad.err" || fail "cpuprofile (bad value) exited with $?"
grep -q 'COLLIO_CPU_PROFILE: "on" is not a path' "$out/cpuprofile.bad.err" ||
	{ cat "$out/cpuprofile.bad.err"; fail "cpuprofile: COLLIO_CPU_PROFILE=on was not refused on stderr"; }
[ $failed = 0 ] && echo "ok   cpuprofile: COLLIO_CPU_PROFILE=path writes a pprof profile per rank; a bad value is refused"
[ $before = 0 ] || failed=1

# e10: a deferred close whose copies fail on rank 1 fails MPI_Finalize on
# every rank, and rank 1 alone says why.
if [ "$np" -lt 2 ]; then
	echo "skip e10 fail: needs 2 ranks or more"
else
	mkdir -p "$out/e10.fail"
	COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT "$build/e10.collio" "$out/e10.fail" fail 2>"$out/e10.fail.err"
	rc=$?
	if [ $rc != 0 ]; then
		cat "$out/e10.fail.err"
		fail "e10 fail exited with $rc"
	elif ! grep -q '^collio\[1\]: MPI_Finalize failed: .*collio recover' "$out/e10.fail.err" ||
		[ "$(grep -c 'MPI_Finalize failed' "$out/e10.fail.err")" != 1 ]; then
		cat "$out/e10.fail.err"
		fail "e10 fail: the failed copy is not reported by rank 1 alone"
	else
		echo "ok   e10 fail: MPI_Finalize returned MPI_ERR_IO on every rank"
	fi
fi

# e10 planted: another user's symbolic link and journal at the cache's
# names in a shared cache directory, preloaded: every open through the
# cache fails with MPI_ERR_ACCESS naming the planted path, and neither the
# file they aim at nor the program's file is touched (e10.c says more).
if [ "$np" -lt 3 ]; then
	echo "skip e10 planted: needs 3 ranks or more"
else
	mkdir -p "$out/e10.planted"
	COLLIO_EXPECT=1 $mpirun -x COLLIO_EXPECT -x LD_PRELOAD="$lib" "$build/e10.host" "$out/e10.planted" planted \
		>"$out/e10.planted.out" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		cat "$out/e10.planted.out"
		fail "e10 planted exited with $rc"
	else
		echo "ok   e10 planted: a planted cache symlink and journal fail the open on every rank, nothing touched"
	fi
fi

# MPI_Finalize of a program that never opened a file, preloaded.
COLLIO_VERBOSE=1 $mpirun -x COLLIO_VERBOSE -x LD_PRELOAD="$lib" "$build/e10.host" "$out/e10.nofile" nofile \
	2>"$out/e10.nofile.err"
rc=$?
if [ $rc != 0 ]; then
	cat "$out/e10.nofile.err"
	fail "e10 nofile exited with $rc"
elif [ "$(grep -c '^collio\[[0-9]*\]: MPI_Finalize -> collio' "$out/e10.nofile.err")" != "$np" ]; then
	cat "$out/e10.nofile.err"
	fail "e10 nofile: MPI_Finalize was not intercepted on every rank"
else
	echo "ok   e10 nofile: MPI_Finalize without file I/O, preloaded"
fi

# Preloading into mpirun's ranks must not disturb a program without file I/O.
if ! $mpirun -x LD_PRELOAD="$lib" /bin/true; then
	fail "LD_PRELOAD into /bin/true"
fi

[ $failed = 0 ] && echo "PASS: C tests ($np ranks)"
exit $failed
