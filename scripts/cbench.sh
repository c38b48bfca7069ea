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
  PROGRAMS="collperf callcost"   (plus "ior-seg ior-strided" when IOR is set)
  VARIANTS="individual vulcan two_phase romio321 collio collio:twophase collio:dynamic collio:static
            collio:tam collio:independent"
  DATA=64m MINCALLS=16 MAXCALLS=1024
                           calls per phase K = DATA/B, clamped to [MINCALLS, MAXCALLS]
                           (16k: 1024 calls, 256k: 256, 1m: 64, 4m: 16)
  QUICK=1                  a tiny matrix, under 2 minutes: NP=2 SIZES="16k 1m" ROUNDS=1
                           VARIANTS="individual romio321 collio collio:independent" DATA=4m MAXCALLS=256
  IOR=                     path of an IOR binary (built outside the repository: docs/benchmarks.md)
  LIBCOLLIO=bin/libcollio.so   the library to preload (make lib)
  MPICC=mpicc MPIRUN=mpirun MPIRUN_ARGS=   compiler, launcher, extra launcher arguments
  LAUNCH_TIMEOUT=300       seconds before a launch is killed (and reported as failed)
  RESULTS=results          output directory (cbench.md, cbench.tsv, cbench-logs/)

Exit status: 0 when every launch succeeded, 1 when any failed (the report is
written anyway, with the failures in it), 2 for bad settings.
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
if [ -z "${PROGRAMS:-}" ]; then
	PROGRAMS="collperf callcost"
	[ -n "$IOR" ] && PROGRAMS+=" ior-seg ior-strided"
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
	*) die "PROGRAMS: unknown program $p (collperf callcost ior-seg ior-strided)" ;;
	esac
done
if [ -n "$IOR" ]; then
	[ -x "$IOR" ] || die "IOR=$IOR is not an executable"
	IOR=$(cd "$(dirname "$IOR")" && pwd)/$(basename "$IOR")
fi
command -v "$MPICC" >/dev/null || die "no $MPICC (scripts/ensure-deps.sh installs Open MPI)"
command -v "$MPIRUN" >/dev/null || die "no $MPIRUN"

# Variants: check the names, and skip host components this Open MPI lacks.
components=$(ompi_info 2>/dev/null || true)
have_component() { # framework name
	grep -Eq "MCA $1: $2 \(" <<<"$components"
}
notes=()
variants=()
needs_lib=0
for v in $VARIANTS; do
	base=${v%%+*}
	case $base in
	collio | collio:twophase | collio:dynamic | collio:static | collio:tam | collio:independent | collio:auto)
		needs_lib=1 ;;
	collio:*) die "VARIANTS: $v: unknown strategy (twophase dynamic static tam independent)" ;;
	ompio) ;;
	individual | vulcan | two_phase | dynamic | dynamic_gen2)
		if ! have_component fcoll "$base"; then
			notes+=("variant $v skipped: ompi_info lists no fcoll component $base")
			continue
		fi ;;
	romio*)
		if ! have_component io "$base"; then
			notes+=("variant $v skipped: ompi_info lists no io component $base")
			continue
		fi ;;
	*) die "VARIANTS: unknown variant $v (see -h)" ;;
	esac
	variants+=("$v")
done
[ ${#variants[@]} -gt 0 ] || die "VARIANTS: nothing left to run"
if [ "$needs_lib" = 1 ]; then
	[ -f "$LIBCOLLIO" ] || die "LIBCOLLIO=$LIBCOLLIO does not exist (make lib)"
	LIBCOLLIO=$(cd "$(dirname "$LIBCOLLIO")" && pwd)/$(basename "$LIBCOLLIO")
fi
for n in "${notes[@]+"${notes[@]}"}"; do echo "cbench: note: $n" >&2; done

# The programs, built with the host's plain mpicc.
mkdir -p "$BUILD"
for p in collperf callcost; do
	"$MPICC" -O2 -Wall -o "$BUILD/$p" "$root/bench/c/$p.c" -lm || die "compiling bench/c/$p.c failed"
done

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
for d in $DIRS; do
	workdirs+=("$(mktemp -d "$d/cbench.XXXXXX")")
done

stamp=$(date +%Y%m%d-%H%M%S)
logs=$RESULTS/cbench-logs/$stamp
mkdir -p "$logs"
tsv=$RESULTS/cbench.tsv
md=$RESULTS/cbench.md
printf 'seq\tround\tprogram\tdir\tnp\tsize\tcalls\tvariant\tstatus\trc\tseconds\twrite_MiBs\tread_MiBs\twrite_us\tread_us\tlog\tcommand\n' >"$tsv"

now() { # seconds, with microseconds where bash has EPOCHREALTIME
	if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi
}

calls_for() { # bytes -> calls per phase
	local k=$((data_bytes / $1))
	[ "$k" -lt "$MINCALLS" ] && k=$MINCALLS
	[ "$k" -gt "$MAXCALLS" ] && k=$MAXCALLS
	echo "$k"
}

# build_cmd sets cmd=(...) for one launch.
build_cmd() { # program np dir size_bytes calls variant
	local prog=$1 np=$2 dir=$3 b=$4 k=$5 v=$6
	local base=${v%%+*} hints=
	[ "$base" != "$v" ] && hints=${v#*+}
	case $base in
	collio:*) hints="collio_strategy=${base#collio:}${hints:+,$hints}" ;;
	esac
	cmd=(timeout -k 10 "$LAUNCH_TIMEOUT" "$MPIRUN" ${launcher[@]+"${launcher[@]}"} -np "$np")
	[ -z "$MPIRUN_ARGS" ] && [ "$np" -gt "$ncores" ] && cmd+=(--oversubscribe)
	case $base in
	collio*) cmd+=(-x "LD_PRELOAD=$LIBCOLLIO") ;;
	ompio) cmd+=(--mca io ompio) ;;
	romio*) cmd+=(--mca io "$base") ;;
	*) cmd+=(--mca io ompio --mca fcoll "$base") ;;
	esac
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
nprog=$(echo "$PROGRAMS" | wc -w)
total=$((ROUNDS * $(echo "$NP" | wc -w) * ${#workdirs[@]} * nprog * $(echo "$SIZES" | wc -w) * nvar))
echo "cbench: $total launches: rounds $ROUNDS, np {$NP}, dirs {$DIRS}, programs {$PROGRAMS}, sizes {$SIZES}, $nvar variants; logs in $logs" >&2

seq=0
failed=0
start=$SECONDS
first_cmds=()
for ((round = 1; round <= ROUNDS; round++)); do
	for np in $NP; do
		for i in "${!workdirs[@]}"; do
			dir=${workdirs[$i]}
			label=$(echo $DIRS | cut -d' ' -f$((i + 1)))
			for prog in $PROGRAMS; do
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
wall=$((SECONDS - start))

# The report.
rerun="QUICK=$QUICK NP='$NP' SIZES='$SIZES' DIRS='$DIRS' ROUNDS=$ROUNDS PROGRAMS='$PROGRAMS' VARIANTS='$VARIANTS'"
rerun+=" DATA=$DATA MINCALLS=$MINCALLS MAXCALLS=$MAXCALLS"
[ -n "$IOR" ] && rerun+=" IOR=$IOR"
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
	echo "- $seq launches in ${wall}s; every launch of every variant is in cbench.tsv with its command"
	echo "- figures: medians over the rounds' successful launches, MiB/s over all ranks (collperf, callcost:"
	echo "  data / slowest rank's time of the calls; IOR: its own figure, open and close included);"
	echo "  µs/call (callcost): the slowest rank's phase time / calls."
	echo "- ratio: the variant's median / the best host variant's median in the same cell (host variants:"
	echo "  every variant but collio*). ok: successful launches / launches."
	for n in "${notes[@]+"${notes[@]}"}"; do echo "- note: $n"; done
	echo
	echo "## Example commands (round 1, np ${NP%% *}, ${DIRS%% *}, ${SIZES%% *})"
	echo
	echo '```sh'
	for c in "${first_cmds[@]+"${first_cmds[@]}"}"; do echo "${c#*|*|}"; done
	echo '```'
	echo
} >"$md"
awk -F'\t' -v progs="$PROGRAMS" -v nps="$NP" -v dirs="$DIRS" -v sizes="$SIZES" -v vars="${variants[*]}" '
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

echo "cbench: wrote $md and $tsv (${wall}s)" >&2
for n in "${notes[@]+"${notes[@]}"}"; do echo "cbench: note: $n" >&2; done
if [ "$failed" != 0 ]; then
	echo "cbench: some launches FAILED: see the status column of $tsv and the logs in $logs" >&2
	exit 1
fi
