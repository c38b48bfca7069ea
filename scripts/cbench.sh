#!/usr/bin/env bash
# cbench: the same C programs run plain on the host MPI-IO (Open MPI's OMPIO
# with a chosen fcoll component, or ROMIO) and with libcollio preloaded
# (mpirun -x LD_PRELOAD=bin/libcollio.so), as separate launches that
# alternate: every round runs every variant once per cell (program, np,
# directory, call size), in an order that rotates from round to round.
# Figures are medians over the rounds; ratios are to the best host variant of
# the same run. See docs/benchmarks.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: [VAR=value ...] scripts/cbench.sh [-h]

Runs C MPI-IO programs with the host MPI-IO variants and with libcollio
preloaded, and writes results/cbench.md (medians and ratios to the best host
variant) and results/cbench.tsv (every launch, with its command).

Programs (PROGRAMS):
  collperf     bench/c/collperf.c: 3-D int array, darray views, R x write_all then R x read_all, verified
  callcost     bench/c/callcost.c: K x write_at_all then K x read_at_all of B bytes per rank, verified
  ior-seg      IOR -a MPIIO -c, one segment per rank: -b K*B -t B -s 1   (needs IOR=/path/to/ior)
  ior-strided  IOR -a MPIIO -c, K segments: -b B -t B -s K                (needs IOR=/path/to/ior)
  Both IOR programs add -w -r -C -e -i 1.
  e3sm         E3SM-IO (the TAM paper's workload): e3sm_io -k -o DIR/out.nc MAP, PnetCDF canonical
               layout, for the F, G and I cases' 16-rank maps (needs E3SM_IO=/path/to/e3sm_io); its own
               cells (E3SM_CASES x E3SM_NP x E3SM_DIRS) and variants (E3SM_VARIANTS); the output files
               of every launch are compared with cmp to E3SM_REF's of the same round and checked with
               ncvalidator

Variants (VARIANTS):
  individual vulcan two_phase dynamic dynamic_gen2   host OMPIO: --mca io ompio --mca fcoll NAME
  ompio                                             host OMPIO with its own fcoll choice
  romio321 (any romio*)                             host ROMIO: --mca io NAME
  collio                                            -x LD_PRELOAD=$LIBCOLLIO, no hints
  collio:S                                          collio with the hint collio_strategy=S
                                                    (twophase dynamic static tam independent)
  NAME+k=v,k=v                                      any of the above with these MPI_Info hints
                                                    (e.g. collio+romio_cb_write=disable,romio_cb_read=disable)
  Hints reach collperf and callcost as -H k=v,..., IOR as IOR_HINT__MPI__k=v.
  Host fcoll components that ompi_info does not list are skipped with a note.

Settings (environment):
  NP="2 4"                 rank counts
  SIZES="16k 256k 1m 4m"   bytes per rank and collective call (B; collperf: N = round(cbrt(B*np/4)))
  DIRS="/dev/shm /var/tmp" directories (a fresh subdirectory of each is used and removed)
  ROUNDS=3                 launches per variant and cell; the tables show medians
  PROGRAMS="collperf callcost"   (plus "ior-seg ior-strided" when IOR is set, "e3sm" when E3SM_IO is)
  VARIANTS="individual vulcan two_phase romio321 collio collio:twophase collio:dynamic collio:static
            collio:tam collio:independent"
  DATA=64m MINCALLS=16 MAXCALLS=1024
                           calls per phase K = DATA/B, clamped to [MINCALLS, MAXCALLS]
                           (16k: 1024 calls, 256k: 256, 1m: 64, 4m: 16)
  QUICK=1                  a tiny matrix, under 2 minutes: NP=2 SIZES="16k 1m" ROUNDS=1
                           VARIANTS="individual romio321 collio collio:independent" DATA=4m MAXCALLS=256
  IOR=                     path of an IOR binary (built outside the repository: docs/benchmarks.md)
  E3SM_IO=                 path of an e3sm_io binary (built outside the repository: docs/benchmarks.md);
                           adds "e3sm" to the default PROGRAMS
  E3SM_DATASETS=<dir of E3SM_IO>/../datasets   where map_{f,g,i}_case_16p.nc are
  E3SM_CASES="f g i"       E3SM_NP="16 4"       E3SM_DIRS="/dev/shm"   (QUICK=1: g, np 4)
  E3SM_VARIANTS="romio321 individual ompio collio collio:twophase collio:tam+collio_node_size=4"
                           hints reach e3sm_io as -x PNETCDF_HINTS="k=v;k=v" (PnetCDF puts them in
                           the MPI_Info of MPI_File_open)
  E3SM_REF=ompio           the variant whose files the others are compared to (cmp), per cell and round
  E3SM_ARGS=               more e3sm_io options (e.g. "-r 2"; -k and -o are always given)
  NCVALIDATOR=ncvalidator  PnetCDF's file checker (Debian: pnetcdf-bin); the check is skipped without it
  LIBCOLLIO=bin/libcollio.so   the library to preload (make lib)
  MPICC=mpicc MPIRUN=mpirun MPIRUN_ARGS=   compiler, launcher, extra launcher arguments
  LAUNCH_TIMEOUT=300       seconds before a launch is killed (and reported as failed)
  RESULTS=results          output directory (cbench.md, cbench.tsv, cbench-logs/)

E3SM-IO results go to results/cbench-e3sm.tsv and a section of results/cbench.md:
per case, np and directory, each variant's median flush time (e3sm_io's "Time of
write flushing", max over ranks, summed over the h0/h1 files), open-to-close
MiB/s (all files' MiB / their summed end-to-end times), the ratios to romio321
and to the best host variant, and the file checks.

Exit status: 0 when every launch succeeded, every E3SM-IO file passed ncvalidator
and every collio variant's E3SM-IO files equalled E3SM_REF's; 1 otherwise (the
report is written anyway, with the failures in it; differences between host
variants are reported only); 2 for bad settings.
EOF
}

case ${1:-} in
-h | --help) usage; exit 0 ;;
'') ;;
*) usage >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
die() {
	echo "cbench: $*" >&2
	exit 2
}

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	NP=${NP:-2}
	SIZES=${SIZES:-"16k 1m"}
	DIRS=${DIRS:-"/dev/shm /var/tmp"}
	ROUNDS=${ROUNDS:-1}
	VARIANTS=${VARIANTS:-"individual romio321 collio collio:independent"}
	DATA=${DATA:-4m}
	MAXCALLS=${MAXCALLS:-256}
else
	NP=${NP:-"2 4"}
	SIZES=${SIZES:-"16k 256k 1m 4m"}
	DIRS=${DIRS:-"/dev/shm /var/tmp"}
	ROUNDS=${ROUNDS:-3}
	VARIANTS=${VARIANTS:-"individual vulcan two_phase romio321 collio collio:twophase collio:dynamic collio:static collio:tam collio:independent"}
	DATA=${DATA:-64m}
	MAXCALLS=${MAXCALLS:-1024}
fi
MINCALLS=${MINCALLS:-16}
IOR=${IOR:-}
E3SM_IO=${E3SM_IO:-}
if [ "$QUICK" = 1 ]; then
	E3SM_CASES=${E3SM_CASES:-g}
	E3SM_NP=${E3SM_NP:-4}
else
	E3SM_CASES=${E3SM_CASES:-"f g i"}
	E3SM_NP=${E3SM_NP:-"16 4"}
fi
E3SM_DIRS=${E3SM_DIRS:-/dev/shm}
E3SM_VARIANTS=${E3SM_VARIANTS:-"romio321 individual ompio collio collio:twophase collio:tam+collio_node_size=4"}
E3SM_REF=${E3SM_REF:-ompio}
E3SM_ARGS=${E3SM_ARGS:-}
NCVALIDATOR=${NCVALIDATOR:-ncvalidator}
if [ -z "${PROGRAMS:-}" ]; then
	PROGRAMS="collperf callcost"
	[ -n "$IOR" ] && PROGRAMS+=" ior-seg ior-strided"
	[ -n "$E3SM_IO" ] && PROGRAMS+=" e3sm"
fi
LIBCOLLIO=${LIBCOLLIO:-$root/bin/libcollio.so}
MPICC=${MPICC:-mpicc}
MPIRUN=${MPIRUN:-mpirun}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
LAUNCH_TIMEOUT=${LAUNCH_TIMEOUT:-300}
RESULTS=${RESULTS:-$root/results}
BUILD=$root/bin/cbench

# bytes converts 16k, 1m, 4m, 123 to a byte count.
bytes() {
	local v=$1 n m=1
	case $v in
	*[kK]) m=1024 ;;
	*[mM]) m=$((1024 * 1024)) ;;
	*[gG]) m=$((1024 * 1024 * 1024)) ;;
	esac
	n=${v%[kKmMgG]}
	case $n in '' | *[!0-9]*) return 1 ;; esac
	echo $((n * m))
}

posint() { case $2 in '' | *[!0-9]* | 0) die "$1=$2: want a positive integer" ;; esac }
posint ROUNDS "$ROUNDS"
posint MINCALLS "$MINCALLS"
posint MAXCALLS "$MAXCALLS"
posint LAUNCH_TIMEOUT "$LAUNCH_TIMEOUT"
[ "$MINCALLS" -le "$MAXCALLS" ] || die "MINCALLS=$MINCALLS is above MAXCALLS=$MAXCALLS"
data_bytes=$(bytes "$DATA") || die "DATA=$DATA: want a size such as 64m"
for n in $NP; do posint NP "$n"; done
for s in $SIZES; do
	b=$(bytes "$s") || die "SIZES: $s is not a size (16k, 1m, 4m, 65536)"
	[ "$b" -gt 0 ] || die "SIZES: $s is zero"
done
for d in $DIRS; do [ -d "$d" ] || die "DIRS: $d is not a directory"; done
for p in $PROGRAMS; do
	case $p in
	collperf | callcost) ;;
	ior-seg | ior-strided) [ -n "$IOR" ] || die "PROGRAMS has $p: set IOR=/path/to/ior (docs/benchmarks.md)" ;;
	e3sm) [ -n "$E3SM_IO" ] || die "PROGRAMS has e3sm: set E3SM_IO=/path/to/e3sm_io (docs/benchmarks.md)" ;;
	*) die "PROGRAMS: unknown program $p (collperf callcost ior-seg ior-strided e3sm)" ;;
	esac
done
# cprogs: the programs of the size cells; e3sm has cells of its own.
cprogs=$(echo "$PROGRAMS" | tr ' ' '\n' | grep -vx e3sm | tr '\n' ' ' || true)
cprogs=${cprogs% }
run_e3sm=0
case " $PROGRAMS " in *" e3sm "*) run_e3sm=1 ;; esac
if [ -n "$IOR" ]; then
	[ -x "$IOR" ] || die "IOR=$IOR is not an executable"
	IOR=$(cd "$(dirname "$IOR")" && pwd)/$(basename "$IOR")
fi
if [ "$run_e3sm" = 1 ]; then
	[ -x "$E3SM_IO" ] || die "E3SM_IO=$E3SM_IO is not an executable"
	E3SM_IO=$(cd "$(dirname "$E3SM_IO")" && pwd)/$(basename "$E3SM_IO")
	E3SM_DATASETS=${E3SM_DATASETS:-$(dirname "$(dirname "$E3SM_IO")")/datasets}
	[ -d "$E3SM_DATASETS" ] || die "E3SM_DATASETS=$E3SM_DATASETS is not a directory (the datasets/ of E3SM-IO's source tree)"
	E3SM_DATASETS=$(cd "$E3SM_DATASETS" && pwd)
	for c in $E3SM_CASES; do
		case $c in f | g | i) ;; *) die "E3SM_CASES: unknown case $c (f g i)" ;; esac
		[ -f "$E3SM_DATASETS/map_${c}_case_16p.nc" ] || die "no $E3SM_DATASETS/map_${c}_case_16p.nc"
	done
	for n in $E3SM_NP; do posint E3SM_NP "$n"; done
	for d in $E3SM_DIRS; do [ -d "$d" ] || die "E3SM_DIRS: $d is not a directory"; done
	if [ -z "$E3SM_CASES" ] || [ -z "$E3SM_NP" ] || [ -z "$E3SM_DIRS" ]; then
		die "E3SM_CASES, E3SM_NP and E3SM_DIRS must not be empty"
	fi
	if ! command -v "$NCVALIDATOR" >/dev/null; then
		NCVALIDATOR=
	fi
fi
command -v "$MPICC" >/dev/null || die "no $MPICC (scripts/ensure-deps.sh installs Open MPI)"
command -v "$MPIRUN" >/dev/null || die "no $MPIRUN"

# Variants: check the names, and skip host components this Open MPI lacks.
components=$(ompi_info 2>/dev/null || true)
have_component() { # framework name
	grep -Eq "MCA $1: $2 \(" <<<"$components"
}
notes=()
needs_lib=0
# check_variants NAME LIST sets checked=(the variants of LIST this host can run).
check_variants() {
	local name=$1 v base
	checked=()
	for v in $2; do
		base=${v%%+*}
		case $base in
		collio | collio:twophase | collio:dynamic | collio:static | collio:tam | collio:independent | collio:auto)
			needs_lib=1 ;;
		collio:*) die "$name: $v: unknown strategy (twophase dynamic static tam independent)" ;;
		ompio) ;;
		individual | vulcan | two_phase | dynamic | dynamic_gen2)
			if ! have_component fcoll "$base"; then
				notes+=("$name: variant $v skipped: ompi_info lists no fcoll component $base")
				continue
			fi ;;
		romio*)
			if ! have_component io "$base"; then
				notes+=("$name: variant $v skipped: ompi_info lists no io component $base")
				continue
			fi ;;
		*) die "$name: unknown variant $v (see -h)" ;;
		esac
		checked+=("$v")
	done
}
variants=()
if [ -n "$cprogs" ]; then
	check_variants VARIANTS "$VARIANTS"
	variants=("${checked[@]+"${checked[@]}"}")
	[ ${#variants[@]} -gt 0 ] || die "VARIANTS: nothing left to run"
fi
evariants=()
if [ "$run_e3sm" = 1 ]; then
	check_variants E3SM_VARIANTS "$E3SM_VARIANTS"
	evariants=("${checked[@]+"${checked[@]}"}")
	[ ${#evariants[@]} -gt 0 ] || die "E3SM_VARIANTS: nothing left to run"
	# The reference of the file checks: E3SM_REF, or the first host variant.
	eref=
	for v in "${evariants[@]}"; do [ "$v" = "$E3SM_REF" ] && eref=$v; done
	if [ -z "$eref" ]; then
		for v in "${evariants[@]}"; do
			case $v in collio*) ;; *) [ -z "$eref" ] && eref=$v ;; esac
		done
		[ -n "$eref" ] && notes+=("E3SM_REF=$E3SM_REF is not among the variants run: the files are compared to $eref's")
		[ -z "$eref" ] && notes+=("no host variant among E3SM_VARIANTS: the files are not compared (cmp)")
	fi
	[ -z "$NCVALIDATOR" ] && notes+=("no ncvalidator (Debian: pnetcdf-bin): E3SM-IO files are not validated")
fi
if [ "$needs_lib" = 1 ]; then
	[ -f "$LIBCOLLIO" ] || die "LIBCOLLIO=$LIBCOLLIO does not exist (make lib)"
	LIBCOLLIO=$(cd "$(dirname "$LIBCOLLIO")" && pwd)/$(basename "$LIBCOLLIO")
fi
for n in "${notes[@]+"${notes[@]}"}"; do echo "cbench: note: $n" >&2; done

# The programs, built with the host's plain mpicc.
if [ -n "$cprogs" ]; then
	mkdir -p "$BUILD"
	for p in collperf callcost; do
		"$MPICC" -O2 -Wall -o "$BUILD/$p" "$root/bench/c/$p.c" -lm || die "compiling bench/c/$p.c failed"
	done
fi

# Launcher flags.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launcher=()
[ "$(id -u)" = 0 ] && launcher+=(--allow-run-as-root)
# shellcheck disable=SC2206 # a word list on purpose
[ -n "$MPIRUN_ARGS" ] && launcher+=($MPIRUN_ARGS)
ncores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

# Fresh subdirectories of the storage directories, and a session directory
# of our own for mpirun: launches of other jobs on the machine share
# /tmp/ompi.<host>.<uid> and can remove it while ours starts ("orte_init
# failed ... mkdir: File exists").
workdirs=()
sessdir=$(mktemp -d "${TMPDIR:-/tmp}/cbench-ompi.XXXXXX")
trap 'rm -rf "$sessdir"; for d in ${workdirs[@]+"${workdirs[@]}"}; do rm -rf "$d"; done' EXIT
export OMPI_MCA_orte_tmpdir_base=$sessdir
if [ -n "$cprogs" ]; then
	for d in $DIRS; do
		workdirs+=("$(mktemp -d "$d/cbench.XXXXXX")")
	done
fi
ndirs=${#workdirs[@]}
if [ "$run_e3sm" = 1 ]; then
	for d in $E3SM_DIRS; do
		workdirs+=("$(mktemp -d "$d/cbench-e3sm.XXXXXX")")
	done
fi

stamp=$(date +%Y%m%d-%H%M%S)
logs=$RESULTS/cbench-logs/$stamp
mkdir -p "$logs"
tsv=$RESULTS/cbench.tsv
md=$RESULTS/cbench.md
printf 'seq\tround\tprogram\tdir\tnp\tsize\tcalls\tvariant\tstatus\trc\tseconds\twrite_MiBs\tread_MiBs\twrite_us\tread_us\tlog\tcommand\n' >"$tsv"
etsv=$RESULTS/cbench-e3sm.tsv
rm -f "$etsv"
[ "$run_e3sm" = 1 ] &&
	printf 'seq\tround\tcase\tdir\tnp\tvariant\tstatus\trc\tseconds\tflush_s\tflush_files\te2e_s\tMiB\totc_MiBs\tcmp\tncvalidator\tlog\tcommand\n' >"$etsv"

now() { # seconds, with microseconds where bash has EPOCHREALTIME
	if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi
}

calls_for() { # bytes -> calls per phase
	local k=$((data_bytes / $1))
	[ "$k" -lt "$MINCALLS" ] && k=$MINCALLS
	[ "$k" -gt "$MAXCALLS" ] && k=$MAXCALLS
	echo "$k"
}

# launch_cmd sets cmd=(...) to the mpirun command line of a variant, up to the program.
launch_cmd() { # np variant-without-hints
	cmd=(timeout -k 10 "$LAUNCH_TIMEOUT" "$MPIRUN" ${launcher[@]+"${launcher[@]}"} -np "$1")
	[ -z "$MPIRUN_ARGS" ] && [ "$1" -gt "$ncores" ] && cmd+=(--oversubscribe)
	case $2 in
	collio*) cmd+=(-x "LD_PRELOAD=$LIBCOLLIO") ;;
	ompio) cmd+=(--mca io ompio) ;;
	romio*) cmd+=(--mca io "$2") ;;
	*) cmd+=(--mca io ompio --mca fcoll "$2") ;;
	esac
}

# build_cmd sets cmd=(...) for one launch.
build_cmd() { # program np dir size_bytes calls variant
	local prog=$1 np=$2 dir=$3 b=$4 k=$5 v=$6
	local base=${v%%+*} hints=
	[ "$base" != "$v" ] && hints=${v#*+}
	case $base in
	collio:*) hints="collio_strategy=${base#collio:}${hints:+,$hints}" ;;
	esac
	launch_cmd "$np" "$base"
	local hflag=()
	case $prog in
	ior-*)
		local IFS=,
		for kv in $hints; do cmd+=(-x "IOR_HINT__MPI__$kv"); done
		;;
	*) [ -n "$hints" ] && hflag=(-H "$hints") ;;
	esac
	case $prog in
	collperf) cmd+=("$BUILD/collperf" -s "$b" -r "$k" -f "$dir/collperf.dat" ${hflag[@]+"${hflag[@]}"}) ;;
	callcost) cmd+=("$BUILD/callcost" -c "$k" -b "$b" -f "$dir/callcost.dat" ${hflag[@]+"${hflag[@]}"}) ;;
	ior-seg) cmd+=("$IOR" -a MPIIO -c -b $((k * b)) -t "$b" -s 1 -w -r -C -e -i 1 -o "$dir/ior.dat") ;;
	ior-strided) cmd+=("$IOR" -a MPIIO -c -b "$b" -t "$b" -s "$k" -w -r -C -e -i 1 -o "$dir/ior.dat") ;;
	esac
}

# parse prints "status write_MiBs read_MiBs write_us read_us" from a log.
parse() { # program log rc
	local prog=$1 log=$2 rc=$3
	case $prog in
	collperf | callcost)
		awk -v rc="$rc" -v prog="$prog" '
			$1 == prog { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }; seen = 1 }
			END {
				st = "ok"
				if (rc == 124 || rc == 137) st = "timeout"
				else if (rc != 0) st = "failed"
				else if (!seen) st = "no-output"
				else if (f["verified"] != "yes") st = "wrong-data"
				w = ("write_MiBs" in f) ? f["write_MiBs"] : "-"; r = ("read_MiBs" in f) ? f["read_MiBs"] : "-"
				wu = ("write_us" in f) ? f["write_us"] : "-"; ru = ("read_us" in f) ? f["read_us"] : "-"
				print st, w, r, wu, ru
			}' "$log"
		;;
	ior-*)
		# IOR's summary table: "write  Max(MiB) Min(MiB) ..." after "Summary of all tests:".
		awk -v rc="$rc" '
			/^Summary of all tests:/ { s = 1; next }
			s && $1 == "write" { w = $2 } s && $1 == "read" { r = $2 }
			/ERROR|Error|error:/ { err = 1 }
			END {
				st = "ok"
				if (rc == 124 || rc == 137) st = "timeout"
				else if (rc != 0) st = "failed"
				else if (w == "" || r == "") st = "no-output"
				else if (err) st = "error-in-output"
				print st, (w == "" ? "-" : w), (r == "" ? "-" : r), "-", "-"
			}' "$log"
		;;
	esac
}

nvar=${#variants[@]}
nprog=$(echo "$cprogs" | wc -w)
total=$((ROUNDS * $(echo "$NP" | wc -w) * ndirs * nprog * $(echo "$SIZES" | wc -w) * nvar))
envar=${#evariants[@]}
etotal=0
[ "$run_e3sm" = 1 ] &&
	etotal=$((ROUNDS * $(echo "$E3SM_NP" | wc -w) * $(echo "$E3SM_DIRS" | wc -w) * $(echo "$E3SM_CASES" | wc -w) * envar))
[ -n "$cprogs" ] &&
	echo "cbench: $total launches: rounds $ROUNDS, np {$NP}, dirs {$DIRS}, programs {$cprogs}, sizes {$SIZES}, $nvar variants; logs in $logs" >&2
[ "$run_e3sm" = 1 ] &&
	echo "cbench: $etotal E3SM-IO launches: rounds $ROUNDS, cases {$E3SM_CASES}, np {$E3SM_NP}, dirs {$E3SM_DIRS}, $envar variants; logs in $logs" >&2
total=$((total + etotal))

# e3sm_cmd sets cmd=(...) for one E3SM-IO launch writing OUT (out.nc, or out_h0.nc and out_h1.nc).
e3sm_cmd() { # np out case variant
	local np=$1 out=$2 c=$3 v=$4
	local base=${v%%+*} hints=
	[ "$base" != "$v" ] && hints=${v#*+}
	case $base in
	collio:*) hints="collio_strategy=${base#collio:}${hints:+,$hints}" ;;
	esac
	launch_cmd "$np" "$base"
	# PnetCDF adds PNETCDF_HINTS (k=v;k=v) to the MPI_Info of MPI_File_open.
	[ -n "$hints" ] && cmd+=(-x "PNETCDF_HINTS=${hints//,/;}")
	# shellcheck disable=SC2206 # a word list on purpose
	cmd+=("$E3SM_IO" -k ${E3SM_ARGS:+$E3SM_ARGS} -o "$out" "$E3SM_DATASETS/map_${c}_case_16p.nc")
}

# e3sm_parse prints "status flush_s flush_files e2e_s MiB otc_MiBs" from an e3sm_io log: per output
# file, e3sm_io prints its name, "Total write amount = X MiB", "Time of write flushing min/max = a / b",
# "end-to-end time min/max = a / b"; flush_s and e2e_s are the sums of the maxima over the files,
# otc_MiBs = MiB / e2e_s (for one file, e3sm_io's own "open-to-close" figure).
e3sm_parse() { # log rc
	awk -v rc="$2" '
		/output file[ ]*=/ { n++; name[n] = $NF; sub(/.*\//, "", name[n]); sub(/\.nc$/, "", name[n]); sub(/^out_?/, "", name[n]); if (name[n] == "") name[n] = "file" }
		/Total write amount/ && n { for (i = 1; i < NF; i++) if ($i == "=") { mib[n] = $(i + 1); break } }
		/Time of write flushing/ && n { fl[n] = $NF }
		/end-to-end time/ && n { e2e[n] = $NF }
		/(^|[^A-Za-z_])(Error|ERROR)([^A-Za-z_]|$)|MPI_ABORT|[Ss]egmentation fault|core dumped/ { err = 1 }
		END {
			st = "ok"
			if (rc == 124 || rc == 137) st = "timeout"
			else if (rc != 0) st = "failed"
			else if (n == 0) st = "no-output"
			else if (err) st = "error-in-output"
			F = 0; E = 0; M = 0; list = ""
			for (i = 1; i <= n; i++) {
				if (fl[i] == "" || e2e[i] == "" || mib[i] == "") { if (st == "ok") st = "no-output"; continue }
				F += fl[i]; E += e2e[i]; M += mib[i]
				list = list (list == "" ? "" : ",") name[i] "=" fl[i]
			}
			if (st != "ok" && n == 0) { print st, "-", "-", "-", "-", "-"; exit }
			printf "%s %.4f %s %.4f %.2f %s\n", st, F, (list == "" ? "-" : list), E, M, (E > 0 ? sprintf("%.2f", M / E) : "-")
		}' "$1"
}

# e3sm_check DIR: compares the files of every successful variant under DIR/<n>/ with the reference's
# (cmp) and runs ncvalidator on them; sets echk_cmp[j] and echk_nc[j] for the variants' indices j.
e3sm_check() {
	local d=$1 j f r out bad
	local refj=-1
	for ((j = 0; j < envar; j++)); do [ "${evariants[$j]}" = "$eref" ] && refj=$j; done
	for ((j = 0; j < envar; j++)); do
		echk_cmp[j]=-
		echk_nc[j]=-
		[ "${estatus[j]}" = ok ] || continue
		# cmp against the reference's files
		if [ "$j" = "$refj" ]; then
			echk_cmp[j]=ref
		elif [ "$refj" = -1 ]; then
			echk_cmp[j]=-
		elif [ "${estatus[refj]}" != ok ]; then
			echk_cmp[j]=no-ref
		else
			bad=
			for f in "$d/$refj"/*.nc; do
				r=${f##*/}
				if [ ! -f "$d/$j/$r" ]; then
					bad+="${bad:+;}$r:missing"
				elif ! out=$(cmp "$f" "$d/$j/$r" 2>&1); then
					out=${out#*differ: }
					out=${out%%,*}
					[ -n "$out" ] || out=differs
					bad+="${bad:+;}$r:${out// /}"
				fi
			done
			for f in "$d/$j"/*.nc; do
				[ -f "$d/$refj/${f##*/}" ] || bad+="${bad:+;}${f##*/}:extra"
			done
			echk_cmp[j]=${bad:-same}
		fi
		# ncvalidator on every file
		if [ -n "$NCVALIDATOR" ]; then
			bad=
			for f in "$d/$j"/*.nc; do
				[ -f "$f" ] || continue
				"$NCVALIDATOR" -q "$f" >/dev/null 2>&1 || bad+="${bad:+;}${f##*/}"
			done
			echk_nc[j]=${bad:+invalid:$bad}
			[ -n "${echk_nc[j]}" ] || echk_nc[j]=valid
		fi
	done
}

seq=0
failed=0
checkfail=0
start=$SECONDS
first_cmds=()
efirst_cmds=()
for ((round = 1; round <= ROUNDS; round++)); do
	[ -n "$cprogs" ] || break
	for np in $NP; do
		for ((i = 0; i < ndirs; i++)); do
			dir=${workdirs[$i]}
			label=$(echo $DIRS | cut -d' ' -f$((i + 1)))
			for prog in $cprogs; do
				for size in $SIZES; do
					b=$(bytes "$size")
					k=$(calls_for "$b")
					# Rotate the variants' order from round to round (and cell to cell).
					off=$(((round - 1 + seq / nvar) % nvar))
					for ((j = 0; j < nvar; j++)); do
						v=${variants[$(((j + off) % nvar))]}
						seq=$((seq + 1))
						build_cmd "$prog" "$np" "$dir" "$b" "$k" "$v"
						printf -v cmdline '%q ' "${cmd[@]}"
						cmdline=${cmdline% }
						[ "$round" = 1 ] && [ "$np" = "${NP%% *}" ] && [ "$i" = 0 ] && [ "$size" = "${SIZES%% *}" ] &&
							first_cmds+=("$prog|$v|$cmdline")
						log=$logs/$(printf '%04d' "$seq")-$prog-np$np-$size-$(echo "$v" | tr '/:+=,' '_____').log
						rm -f "$dir"/*.dat
						t0=$(now)
						rc=0
						"${cmd[@]}" >"$log" 2>&1 </dev/null || rc=$?
						secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
						read -r status w r wu ru < <(parse "$prog" "$log" "$rc")
						printf '%d\t%d\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$seq" "$round" "$prog" \
							"$label" "$np" "$size" "$k" "$v" "$status" "$rc" "$secs" "$w" "$r" "$wu" "$ru" "$log" "$cmdline" >>"$tsv"
						if [ "$status" = ok ]; then
							printf 'cbench: [%d/%d] r%d np%d %-9s %-11s %-5s %-22s write %9s read %9s MiB/s\n' "$seq" "$total" \
								"$round" "$np" "$label" "$prog" "$size" "$v" "$w" "$r" >&2
						else
							failed=1
							printf 'cbench: [%d/%d] r%d np%d %-9s %-11s %-5s %-22s FAILED (%s, exit %d); last lines of %s:\n' \
								"$seq" "$total" "$round" "$np" "$label" "$prog" "$size" "$v" "$status" "$rc" "$log" >&2
							tail -n 5 "$log" | sed 's/^/    /' >&2
						fi
					done
				done
			done
		done
	done
done

# E3SM-IO: its own cells (case, np, directory), all variants of a cell in a row, then the file checks.
eseq=0
for ((round = 1; round <= ROUNDS; round++)); do
	[ "$run_e3sm" = 1 ] || break
	for np in $E3SM_NP; do
		i=0
		for label in $E3SM_DIRS; do
			dir=${workdirs[$((ndirs + i))]}
			i=$((i + 1))
			for c in $E3SM_CASES; do
				rows=()
				estatus=()
				rm -rf "${dir:?}"/*
				off=$(((round - 1 + eseq / envar) % envar))
				for ((jj = 0; jj < envar; jj++)); do
					j=$(((jj + off) % envar))
					v=${evariants[$j]}
					seq=$((seq + 1))
					eseq=$((eseq + 1))
					mkdir -p "$dir/$j"
					e3sm_cmd "$np" "$dir/$j/out.nc" "$c" "$v"
					printf -v cmdline '%q ' "${cmd[@]}"
					cmdline=${cmdline% }
					[ "$round" = 1 ] && [ "$np" = "${E3SM_NP%% *}" ] && [ "$i" = 1 ] && [ "$c" = "${E3SM_CASES%% *}" ] &&
						efirst_cmds+=("$cmdline")
					log=$logs/$(printf '%04d' "$seq")-e3sm-$c-np$np-$(echo "$v" | tr '/:+=,' '_____').log
					t0=$(now)
					rc=0
					"${cmd[@]}" >"$log" 2>&1 </dev/null || rc=$?
					secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
					read -r status fl flf e2e mib otc < <(e3sm_parse "$log" "$rc")
					estatus[j]=$status
					rows[j]=$(printf '%d\t%d\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s' "$seq" "$round" "$c" "$label" "$np" "$v" \
						"$status" "$rc" "$secs" "$fl" "$flf" "$e2e" "$mib" "$otc")
					rows[j]+=$'\t@CHECK@\t'$log$'\t'$cmdline
					if [ "$status" = ok ]; then
						printf 'cbench: [%d/%d] r%d np%-2d %-9s e3sm %s  %-34s flush %8s s (%s)  %8s MiB/s open-to-close\n' "$seq" "$total" \
							"$round" "$np" "$label" "$c" "$v" "$fl" "$flf" "$otc" >&2
					else
						failed=1
						printf 'cbench: [%d/%d] r%d np%-2d %-9s e3sm %s  %-34s FAILED (%s, exit %d); last lines of %s:\n' \
							"$seq" "$total" "$round" "$np" "$label" "$c" "$v" "$status" "$rc" "$log" >&2
						tail -n 5 "$log" | sed 's/^/    /' >&2
					fi
				done
				echk_cmp=()
				echk_nc=()
				e3sm_check "$dir"
				msg=
				for ((j = 0; j < envar; j++)); do
					chk=${echk_cmp[j]}$'\t'${echk_nc[j]}
					printf '%s\n' "${rows[j]/@CHECK@/"$chk"}" >>"$etsv"
					[ "${estatus[j]}" = ok ] || continue
					msg+=" ${evariants[$j]}:${echk_cmp[j]}/${echk_nc[j]}"
					case ${echk_nc[j]} in invalid*) checkfail=1 ;; esac
					case ${evariants[$j]}:${echk_cmp[j]} in
					collio*:same | collio*:ref | collio*:no-ref | collio*:-) ;;
					collio*) checkfail=1 ;;
					esac
				done
				echo "cbench: r$round np$np $label e3sm $c files (cmp to $eref / ncvalidator):$msg" >&2
				rm -rf "${dir:?}"/*
			done
		done
	done
done
wall=$((SECONDS - start))

# The report.
if [ -n "$cprogs" ]; then
	rerun="QUICK=$QUICK NP='$NP' SIZES='$SIZES' DIRS='$DIRS' ROUNDS=$ROUNDS PROGRAMS='$PROGRAMS' VARIANTS='$VARIANTS'"
	rerun+=" DATA=$DATA MINCALLS=$MINCALLS MAXCALLS=$MAXCALLS"
else
	rerun="QUICK=$QUICK ROUNDS=$ROUNDS PROGRAMS='$PROGRAMS'"
fi
[ -n "$IOR" ] && rerun+=" IOR=$IOR"
if [ "$run_e3sm" = 1 ]; then
	rerun+=" E3SM_IO=$E3SM_IO E3SM_DATASETS=$E3SM_DATASETS E3SM_CASES='$E3SM_CASES' E3SM_NP='$E3SM_NP'"
	rerun+=" E3SM_DIRS='$E3SM_DIRS' E3SM_VARIANTS='$E3SM_VARIANTS' E3SM_REF=$E3SM_REF"
	[ -n "$E3SM_ARGS" ] && rerun+=" E3SM_ARGS='$E3SM_ARGS'"
fi
[ -n "$MPIRUN_ARGS" ] && rerun+=" MPIRUN_ARGS='$MPIRUN_ARGS'"
rerun+=" scripts/cbench.sh"
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
{
	echo "# cbench: C programs on the host MPI-IO and with libcollio preloaded"
	echo
	echo "- command: \`$rerun\`"
	echo "- date: $(date '+%Y-%m-%d %H:%M:%S %z'); repository $commit (git describe of the work tree)"
	[ "$needs_lib" = 1 ] && echo "- library: $LIBCOLLIO (sha256 $(sha256sum "$LIBCOLLIO" | cut -c1-12), built $(date -r "$LIBCOLLIO" '+%Y-%m-%d %H:%M'))"
	echo "- environment of every launch: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and"
	echo "  OMPI_MCA_orte_tmpdir_base=<a fresh directory> (mpirun's session directory, private to this run)"
	echo "- machine: $ncores cores, $(uname -sr), $("$MPIRUN" --version 2>/dev/null | head -n 1)"
	echo "- $seq launches in ${wall}s; every launch of every variant is in cbench.tsv$([ "$run_e3sm" = 1 ] && echo " (E3SM-IO: cbench-e3sm.tsv)") with its command"
	if [ -n "$cprogs" ]; then
		echo "- figures: medians over the rounds' successful launches, MiB/s over all ranks (collperf, callcost:"
		echo "  data / phase time from the first rank's start to the last rank's end; IOR: its own figure,"
		echo "  open and close included); µs/call (callcost): that phase time / calls."
		echo "- ratio: the variant's median / the best host variant's median in the same cell (host variants:"
		echo "  every variant but collio*). ok: successful launches / launches."
	fi
	for n in "${notes[@]+"${notes[@]}"}"; do echo "- note: $n"; done
	echo
	if [ -n "$cprogs" ]; then
		echo "## Example commands (round 1, np ${NP%% *}, ${DIRS%% *}, ${SIZES%% *})"
		echo
		echo '```sh'
		for c in "${first_cmds[@]+"${first_cmds[@]}"}"; do echo "${c#*|*|}"; done
		echo '```'
		echo
	fi
} >"$md"
[ -n "$cprogs" ] && awk -F'\t' -v progs="$cprogs" -v nps="$NP" -v dirs="$DIRS" -v sizes="$SIZES" -v vars="${variants[*]}" '
	function median(key, col,    n, i, j, t, a) {
		n = 0
		for (i = 1; i <= cnt[key]; i++) if (val[key, i, col] != "-" && val[key, i, col] != "") a[++n] = val[key, i, col] + 0
		if (n == 0) return ""
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function fmt(x) { return x == "" ? "—" : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x)) }
	function ratio(x, best) { return (x == "" || best == "" || best == 0) ? "—" : sprintf("%.2f", x / best) }
	function ishost(v) { return v !~ /^collio/ }
	NR == 1 { next }
	{
		key = $3 SUBSEP $4 SUBSEP $5 SUBSEP $6 SUBSEP $8
		n = ++cnt[key]
		calls[$3, $6] = $7
		if ($9 == "ok") { good[key]++; val[key, n, 1] = $12; val[key, n, 2] = $13; val[key, n, 3] = $14; val[key, n, 4] = $15 }
		else fails[key] = fails[key] " " $9
	}
	END {
		np_ = split(progs, P, " "); nn = split(nps, N, " "); nd = split(dirs, D, " ")
		ns = split(sizes, S, " "); nv = split(vars, V, " ")
		# Summary: collio (automatic) against the best host variant.
		print "## Summary: collio (automatic) / best host variant"
		print ""
		print "| program | dir | np | size | write MiB/s: collio / best host (which) | ratio | read MiB/s: collio / best host (which) | ratio |"
		print "|---|---|---|---|---|---|---|---|"
		for (p = 1; p <= np_; p++) for (d = 1; d <= nd; d++) for (q = 1; q <= nn; q++) for (s = 1; s <= ns; s++) {
			cell = P[p] SUBSEP D[d] SUBSEP N[q] SUBSEP S[s]
			line = "| " P[p] " | " D[d] " | " N[q] " | " S[s] " |"
			for (c = 1; c <= 2; c++) {
				hb = ""; hv = "—"
				for (v = 1; v <= nv; v++) if (ishost(V[v])) {
					m = median(cell SUBSEP V[v], c)
					if (m != "" && (hb == "" || m > hb)) { hb = m; hv = V[v] }
				}
				cm = median(cell SUBSEP "collio", c)
				line = line " " fmt(cm) " / " fmt(hb) " (" hv ") | " ratio(cm, hb) " |"
			}
			print line
		}
		print ""
		for (p = 1; p <= np_; p++) {
			print "## " P[p]
			print ""
			for (d = 1; d <= nd; d++) for (q = 1; q <= nn; q++) for (s = 1; s <= ns; s++) {
				cell = P[p] SUBSEP D[d] SUBSEP N[q] SUBSEP S[s]
				print "### " P[p] " · " D[d] " · np " N[q] " · " S[s] " per call and rank (" calls[P[p], S[s]] " calls per phase)"
				print ""
				for (c = 1; c <= 2; c++) {
					best[c] = ""; bestv[c] = "—"
					for (v = 1; v <= nv; v++) if (ishost(V[v])) {
						m = median(cell SUBSEP V[v], c)
						if (m != "" && (best[c] == "" || m > best[c])) { best[c] = m; bestv[c] = V[v] }
					}
				}
				us = (P[p] == "callcost")
				hdr = "| variant | write MiB/s | read MiB/s | write / best host | read / best host |"
				sep = "|---|---|---|---|---|"
				if (us) { hdr = hdr " write µs/call | read µs/call |"; sep = sep "---|---|" }
				print hdr " ok |"
				print sep "---|"
				for (v = 1; v <= nv; v++) {
					key = cell SUBSEP V[v]
					w = median(key, 1); r = median(key, 2)
					okc = (key in good) ? good[key] : 0
					row = "| " V[v] " | " fmt(w) " | " fmt(r) " | " ratio(w, best[1]) " | " ratio(r, best[2]) " |"
					if (us) row = row " " fmt(median(key, 3)) " | " fmt(median(key, 4)) " |"
					st = okc "/" cnt[key]
					if (okc < cnt[key]) st = "**" st " FAILED:" fails[key] "**"
					print row " " st " |"
				}
				print ""
				print "Best host variant: write " bestv[1] ", read " bestv[2] "."
				print ""
			}
		}
	}' "$tsv" >>"$md"

if [ "$run_e3sm" = 1 ]; then
	{
		echo "## E3SM-IO: the F, G and I cases' history files through PnetCDF"
		echo
		echo "- e3sm_io: $E3SM_IO (sha256 $(sha256sum "$E3SM_IO" | cut -c1-12)), maps from $E3SM_DATASETS"
		echo "- PnetCDF canonical layout (e3sm_io's defaults); each rank posts its pieces of every variable, and"
		echo "  PnetCDF flushes them in one collective MPI_File_write_at_all per file (F h0: about 2 million pieces)"
		echo "- flush s: e3sm_io's \"Time of write flushing\" (max over ranks), summed over the case's files"
		echo "  (F and I: h0 and h1; per file in the next column); open-to-close MiB/s: the files' MiB over their"
		echo "  summed end-to-end times (open to close, max over ranks). Medians over the rounds; ok: successful"
		echo "  launches / launches (host variants: every variant but collio*)."
		echo "- flush ratios: the variant's flush time / romio321's, and / the best (lowest) host variant's: below 1 is"
		echo "  faster. MiB/s ratios: / romio321's, / the best (highest) host variant's: above 1 is faster."
		echo "- files: every launch's files are compared with cmp to $eref's of the same cell and round (same, or"
		echo "  file:byte of the first difference), and checked with ncvalidator ($([ -n "$NCVALIDATOR" ] && echo yes || echo "not installed: skipped"))."
		echo "- hints (collio:S, NAME+k=v) reach PnetCDF as -x PNETCDF_HINTS=\"k=v;k=v\", which it adds to the MPI_Info"
		echo "  of MPI_File_open"
		echo
		echo "Example commands (round 1, first cell):"
		echo
		echo '```sh'
		for c in "${efirst_cmds[@]+"${efirst_cmds[@]}"}"; do echo "$c"; done
		echo '```'
		echo
	} >>"$md"
	awk -F'\t' -v cases="$E3SM_CASES" -v nps="$E3SM_NP" -v dirs="$E3SM_DIRS" -v vars="${evariants[*]}" -v ref="$eref" '
		function median(key, col,    n, i, j, t, a) {
			n = 0
			for (i = 1; i <= cnt[key]; i++) if (val[key, i, col] != "-" && val[key, i, col] != "") a[++n] = val[key, i, col] + 0
			if (n == 0) return ""
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		function fs(x) { return x == "" ? "—" : (x >= 10 ? sprintf("%.1f", x) : (x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x))) }
		function fmt(x) { return x == "" ? "—" : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x)) }
		function ratio(x, best) { return (x == "" || best == "" || best == 0) ? "—" : sprintf("%.2f", x / best) }
		function ishost(v) { return v !~ /^collio/ }
		function perfile(key,    i, k, out) {
			out = ""
			for (i = 1; i <= nf[key]; i++) {
				k = fname[key, i]
				out = out (out == "" ? "" : " / ") k " " fs(median(key SUBSEP "f" SUBSEP k, 1))
			}
			return (out == "" || nf[key] == 1) ? "—" : out
		}
		function files(key,    s) {
			s = ""
			if (nsame[key] + ndiff[key] > 0) s = "cmp " (ndiff[key] ? "**differs " ndiff[key] "/" (nsame[key] + ndiff[key]) ":" diffs[key] "**" : "same " nsame[key] "/" nsame[key])
			else if (nref[key]) s = "cmp: reference"
			else s = "cmp —"
			if (nvalid[key] + ninvalid[key] > 0) s = s ", ncvalidator " (ninvalid[key] ? "**invalid " ninvalid[key] "/" (nvalid[key] + ninvalid[key]) ":" invalid[key] "**" : "ok " nvalid[key] "/" nvalid[key])
			return s
		}
		NR == 1 { next }
		{
			key = $3 SUBSEP $4 SUBSEP $5 SUBSEP $6
			n = ++cnt[key]
			if ($7 == "ok") {
				good[key]++; val[key, n, 1] = $10; val[key, n, 2] = $14
				m = split($11, parts, ",")
				for (i = 1; i <= m; i++) {
					split(parts[i], kv, "=")
					fk = key SUBSEP "f" SUBSEP kv[1]
					if (!((key, kv[1]) in seenf)) { seenf[key, kv[1]] = 1; fname[key, ++nf[key]] = kv[1] }
					val[fk, ++cnt[fk], 1] = kv[2]
				}
				if ($15 == "same") nsame[key]++
				else if ($15 == "ref") nref[key]++
				else if ($15 != "-" && $15 != "no-ref") { ndiff[key]++; if (index(diffs[key], $15) == 0) diffs[key] = diffs[key] " " $15 }
				if ($16 == "valid") nvalid[key]++
				else if ($16 != "-") { ninvalid[key]++; if (index(invalid[key], $16) == 0) invalid[key] = invalid[key] " " $16 }
			} else fails[key] = fails[key] " " $7
		}
		END {
			nc = split(cases, C, " "); nn = split(nps, N, " "); nd = split(dirs, D, " "); nv = split(vars, V, " ")
			print "### Summary: collio (automatic) against romio321 and the best host variant"
			print ""
			print "| case | dir | np | collio flush s | romio321 flush s | collio / romio321 | best host flush s (which) | collio / best host | collio MiB/s | best host MiB/s (which) | collio / best host | collio files |"
			print "|---|---|---|---|---|---|---|---|---|---|---|---|"
			for (c = 1; c <= nc; c++) for (d = 1; d <= nd; d++) for (q = 1; q <= nn; q++) {
				cell = C[c] SUBSEP D[d] SUBSEP N[q]
				bf = ""; bfv = "—"; bb = ""; bbv = "—"
				for (v = 1; v <= nv; v++) if (ishost(V[v])) {
					m = median(cell SUBSEP V[v], 1)
					if (m != "" && (bf == "" || m < bf)) { bf = m; bfv = V[v] }
					m = median(cell SUBSEP V[v], 2)
					if (m != "" && (bb == "" || m > bb)) { bb = m; bbv = V[v] }
				}
				cf = median(cell SUBSEP "collio", 1); cb = median(cell SUBSEP "collio", 2); rf = median(cell SUBSEP "romio321", 1)
				print "| " toupper(C[c]) " | " D[d] " | " N[q] " | " fs(cf) " | " fs(rf) " | " ratio(cf, rf) " | " fs(bf) " (" bfv ") | " ratio(cf, bf) " | " fmt(cb) " | " fmt(bb) " (" bbv ") | " ratio(cb, bb) " | " (good[cell SUBSEP "collio"] ? files(cell SUBSEP "collio") : "—") " |"
			}
			print ""
			for (c = 1; c <= nc; c++) for (d = 1; d <= nd; d++) for (q = 1; q <= nn; q++) {
				cell = C[c] SUBSEP D[d] SUBSEP N[q]
				print "### E3SM " toupper(C[c]) " case · " D[d] " · np " N[q]
				print ""
				bf = ""; bfv = "—"; bb = ""; bbv = "—"
				for (v = 1; v <= nv; v++) if (ishost(V[v])) {
					m = median(cell SUBSEP V[v], 1)
					if (m != "" && (bf == "" || m < bf)) { bf = m; bfv = V[v] }
					m = median(cell SUBSEP V[v], 2)
					if (m != "" && (bb == "" || m > bb)) { bb = m; bbv = V[v] }
				}
				rf = median(cell SUBSEP "romio321", 1); rb = median(cell SUBSEP "romio321", 2)
				print "| variant | flush s | flush s per file | flush / romio321 | flush / best host | open-to-close MiB/s | MiB/s / romio321 | MiB/s / best host | files (cmp to " ref ", ncvalidator) | ok |"
				print "|---|---|---|---|---|---|---|---|---|---|"
				for (v = 1; v <= nv; v++) {
					key = cell SUBSEP V[v]
					f = median(key, 1); b = median(key, 2)
					okc = (key in good) ? good[key] : 0
					st = okc "/" cnt[key]
					if (okc < cnt[key]) st = "**" st " FAILED:" fails[key] "**"
					print "| " V[v] " | " fs(f) " | " perfile(key) " | " ratio(f, rf) " | " ratio(f, bf) " | " fmt(b) " | " ratio(b, rb) " | " ratio(b, bb) " | " (okc ? files(key) : "—") " | " st " |"
				}
				print ""
				print "Best host variant: flush " bfv ", open-to-close " bbv "."
				print ""
			}
		}' "$etsv" >>"$md"
fi

echo "cbench: wrote $md and $tsv$([ "$run_e3sm" = 1 ] && echo " and $etsv") (${wall}s)" >&2
for n in "${notes[@]+"${notes[@]}"}"; do echo "cbench: note: $n" >&2; done
[ "$checkfail" != 0 ] &&
	echo "cbench: some E3SM-IO file checks FAILED (a collio variant's files differ from $eref's, or ncvalidator rejected a file): see the cmp and ncvalidator columns of $etsv" >&2
if [ "$failed" != 0 ]; then
	echo "cbench: some launches FAILED: see the status column of $tsv$([ "$run_e3sm" = 1 ] && echo " and $etsv") and the logs in $logs" >&2
fi
[ "$failed" = 0 ] && [ "$checkfail" = 0 ] || exit 1
