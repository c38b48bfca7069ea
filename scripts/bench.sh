#!/usr/bin/env bash
# Benchmarks collio against the host MPI-IO, then writes results/bench.md,
# results/bench.json and PNG plots (results/bench-bandwidth-<storage>.png,
# results/bench-breakdown-<storage>.png) with bin/benchreport and prints the
# markdown. Workloads (every value written is read back and verified):
#   collperf   collective write then read of a 3-D int32 array through subarray views
#   ior-small  iorbench, small interleaved transfers: -c -t 4k -b 4k (ranks alternate every 4 KiB), -C reads
#   ior-large  iorbench, large transfers: -c -t 4m -b 32m per rank, -C reads, fsync
#   flash btio e3sm s3d   cmd/patterns: FLASH-IO checkpoint (noncontiguous memory), BT-IO (nested strided
#              views; needs a square NP), E3SM-IO-like decomposition map (many small pieces), S3D-IO (4-D subarrays)
#
#   make bench                      # or scripts/bench.sh after make build: well under 20 minutes on 2 cores
#   QUICK=1 make bench              # small sizes, one repetition: under 2 minutes
#   NP=8 SIZE=1024 REPS=5 scripts/bench.sh
#   WORKLOADS="collperf e3sm" VARIANTS="collio collio+twophase romio321" scripts/bench.sh
#
# On a cluster (Open MPI's mpirun):
#   NP=64 MPIRUN_ARGS="--hostfile $HOME/hosts --map-by node" BENCH_TMPFS_DIR= \
#     BENCH_DISK_DIR=/lustre/scratch/$USER scripts/bench.sh
#   - hostfile: Open MPI's format, one "nodename slots=K" line per node; give it (and the mapping) in
#     MPIRUN_ARGS, which also turns off the automatic --oversubscribe.
#   - NP: total ranks. iorbench's sizes and flash's blocks are per rank (they grow with NP); collperf,
#     btio, e3sm and s3d are global sizes (raise SIZE / PATTERN_ARGS with NP). btio needs a square NP
#     (4, 9, 16, 64, ...) and is skipped with a note otherwise.
#   - fs path: BENCH_DISK_DIR on the parallel file system, visible from every node (a fresh subdirectory
#     is made and removed); BENCH_TMPFS_DIR= skips /dev/shm, which is node-local there. Keep the repository
#     (bin/) on a shared file system too, or point COLLPERF, IORBENCH, PATTERNS at binaries every node sees.
#   - SIM_VARIANTS= skips the emulated striped file system (only meaningful on one node).
#
# Each launch runs one implementation variant on one workload: collio (default hints, or a preset), or
# one host MPI-IO component chosen with --mca (OMPIO with each fcoll, ROMIO). Each is run on every
# storage directory, and each launch writes its JSON to results/raw/<date-time>/ (with a .log of its
# output and launches.tsv).
#
# Settings (environment variables):
#   NP=4              ranks per launch (mpirun -np)
#   SIZE=512          collperf's global array: N (N^3 int32, 512 -> 512 MiB) or X,Y,Z; QUICK=1 makes it 128
#   REPS=3            repetitions of write+read inside each launch (-i); QUICK=1 makes it 1
#   QUICK=1           small and fast defaults (above and below)
#   WORKLOADS="collperf ior-small ior-large flash btio e3sm s3d"   what to run
#   IOR_SMALL_ARGS="-t 4k -b 4k -s 1024"   ior-small sizes (per rank; QUICK=1: -s 128)
#   IOR_LARGE_ARGS="-t 4m -b 32m -s 1"     ior-large sizes (per rank; QUICK=1: -t 1m -b 4m)
#   PATTERN_ARGS="-flash-blocks 16 -btio-size 64 -btio-steps 4 -e3sm-ncol 16384 -s3d-size 64"
#                     pattern sizes (QUICK=1: -flash-blocks 4 -btio-size 32 -btio-steps 2 -e3sm-ncol 4096
#                     -s3d-size 32); see patterns -h for the others
#   WARMUP=1          one untimed collperf launch on each storage directory before its variants (0: none)
#   INTERLEAVE=1      run REPS rounds of one-repetition launches instead, so that collio and the host
#                     variants alternate in every round (spreads machine noise; costs a launch, about
#                     0.5 s, per repetition; collperf then writes and reads once untimed first, -warmup,
#                     since a launch's first write allocates the file's pages; the other workloads' writes
#                     are their launch's first). Default 0: the repetitions of a variant run back to back.
#   VARIANTS="collio collio+twophase collio+dynamic collio+static collio+indep collio+tam collio+allaggs
#             ompio/vulcan ompio/dynamic ompio/dynamic_gen2 ompio/two_phase ompio/individual romio321"
#                     what to run: collio, collio+<preset>, ompio/<fcoll>, romio321 (any romio*), or default
#                     (no --mca). Presets: twophase, dynamic, static, tam (collio_strategy=<preset>),
#                     indep (romio_cb_read/write=disable: independent I/O), allaggs (cb_config_list=*:*,
#                     every rank aggregates), cyclic / aligned / even / affinity (collio_file_domains),
#                     twophase-aligned (two-phase with ROMIO's equal domains instead of affinity ones).
#   SIM_VARIANTS="collio+cyclic collio+aligned collio+even collio+indep"
#                     collio variants run a third time on the sim driver (an emulated striped file system:
#                     4 targets, 1 MiB stripes, 200 MiB/s each, lock revocation 1 ms; in the disk directory)
#                     to show what stripe-aware planning is worth; empty to skip
#   BENCH_TMPFS_DIR=/dev/shm   tmpfs directory; set it empty to skip (on several nodes /dev/shm is
#                     node-local, so skip it there)
#   BENCH_DISK_DIR=   disk (or parallel file system) directory; default a new temp dir under /var/tmp.
#                     On a cluster point it at the shared file system, e.g. BENCH_DISK_DIR=/scratch/$USER.
#                     A fresh subdirectory is made in each directory and removed at the end.
#   MPIRUN=mpirun     the launcher (Open MPI's: the variants use --mca)
#   MPIRUN_ARGS=      extra launcher arguments, e.g. "--hostfile hosts --map-by node" on a cluster.
#                     When empty and NP exceeds the cores here, --oversubscribe is added.
#   COLLPERF_ARGS=    extra collperf flags for every collperf launch, e.g. "-hint cb_buffer_size=4m"
#   BENCH_ARGS=       extra flags for every launch of every command (hints: "-hint cb_buffer_size=4m")
#   LAUNCH_TIMEOUT=1800  seconds before mpirun kills a stuck launch (MPIEXEC_TIMEOUT)
#   RESULTS=results   output directory
# As root, --allow-run-as-root is added. Reads of the disk directory are served largely from the
# page cache (the file was just written; caches are not dropped): they measure the I/O path, not the
# device. Exit status: 1 if any launch failed (the report is written anyway).
set -euo pipefail

if [ $# -gt 0 ]; then
	echo "usage: [NP=4] [SIZE=512] [REPS=3] [QUICK=1] [WORKLOADS=...] [INTERLEAVE=1] [BENCH_DISK_DIR=dir] ... $0 (see the comment at its top)" >&2
	exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	SIZE=${SIZE:-128}
	REPS=${REPS:-1}
	IOR_SMALL_ARGS=${IOR_SMALL_ARGS:-"-t 4k -b 4k -s 128"}
	IOR_LARGE_ARGS=${IOR_LARGE_ARGS:-"-t 1m -b 4m -s 1"}
	PATTERN_ARGS=${PATTERN_ARGS:-"-flash-blocks 4 -btio-size 32 -btio-steps 2 -e3sm-ncol 4096 -s3d-size 32"}
else
	SIZE=${SIZE:-512}
	REPS=${REPS:-3}
	IOR_SMALL_ARGS=${IOR_SMALL_ARGS:-"-t 4k -b 4k -s 1024"}
	IOR_LARGE_ARGS=${IOR_LARGE_ARGS:-"-t 4m -b 32m -s 1"}
	PATTERN_ARGS=${PATTERN_ARGS:-"-flash-blocks 16 -btio-size 64 -btio-steps 4 -e3sm-ncol 16384 -s3d-size 64"}
fi
WORKLOADS=${WORKLOADS:-"collperf ior-small ior-large flash btio e3sm s3d"}
NP=${NP:-4}
INTERLEAVE=${INTERLEAVE:-0}
WARMUP=${WARMUP:-1}
VARIANTS=${VARIANTS:-"collio collio+twophase collio+dynamic collio+static collio+indep collio+tam collio+allaggs ompio/vulcan ompio/dynamic ompio/dynamic_gen2 ompio/two_phase ompio/individual romio321"}
SIM_VARIANTS=${SIM_VARIANTS-"collio+cyclic collio+aligned collio+even collio+indep"}
SIM_HINTS=(-hint striping_unit=1m -hint striping_factor=4 -hint cb_config_list='*:*')
BENCH_TMPFS_DIR=${BENCH_TMPFS_DIR-/dev/shm}
BENCH_DISK_DIR=${BENCH_DISK_DIR:-}
MPIRUN=${MPIRUN:-mpirun}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
COLLPERF_ARGS=${COLLPERF_ARGS:-}
BENCH_ARGS=${BENCH_ARGS:-}
LAUNCH_TIMEOUT=${LAUNCH_TIMEOUT:-1800}
RESULTS=${RESULTS:-$root/results}
COLLPERF=${COLLPERF:-$root/bin/collperf}
IORBENCH=${IORBENCH:-$root/bin/iorbench}
PATTERNS=${PATTERNS:-$root/bin/patterns}
BENCHREPORT=${BENCHREPORT:-$root/bin/benchreport}

die() {
	echo "bench: $*" >&2
	exit 2
}
case $NP in '' | *[!0-9]* | 0) die "NP=$NP: want a positive integer" ;; esac
case $REPS in '' | *[!0-9]* | 0) die "REPS=$REPS: want a positive integer" ;; esac
case $SIZE in '' | *[!0-9,]*) die "SIZE=$SIZE: want N or X,Y,Z" ;; esac
case $INTERLEAVE in 0 | 1) ;; *) die "INTERLEAVE=$INTERLEAVE: want 0 or 1" ;; esac
case $WARMUP in 0 | 1) ;; *) die "WARMUP=$WARMUP: want 0 or 1" ;; esac
for v in $VARIANTS $SIM_VARIANTS; do
	case $v in collio | collio+indep | collio+allaggs | collio+cyclic | collio+aligned | collio+even | collio+affinity) ;;
	collio+twophase-aligned) ;;
	collio+twophase | collio+dynamic | collio+static | collio+tam | default | ompio/?* | romio*) ;;
	*) die "VARIANTS: unknown variant $v" ;;
	esac
done
for w in $WORKLOADS; do
	case $w in collperf | ior-small | ior-large | flash | btio | e3sm | s3d) ;;
	*) die "WORKLOADS: unknown workload $w (collperf ior-small ior-large flash btio e3sm s3d)" ;;
	esac
done
for v in $SIM_VARIANTS; do
	case $v in collio*) ;; *) die "SIM_VARIANTS: only collio variants run on sim, not $v" ;; esac
done

# preset prints the collperf flags of a collio variant.
preset() {
	case $1 in
	collio) ;;
	collio+indep) echo "-hint romio_cb_write=disable -hint romio_cb_read=disable" ;;
	collio+allaggs) echo "-hint cb_config_list=*:*" ;;
	collio+cyclic) echo "-hint collio_file_domains=stripe_cyclic" ;;
	collio+aligned) echo "-hint collio_file_domains=aligned" ;;
	collio+even) echo "-hint collio_file_domains=even" ;;
	collio+affinity) echo "-hint collio_file_domains=affinity" ;;
	collio+twophase-aligned) echo "-hint collio_strategy=twophase -hint collio_file_domains=aligned" ;;
	collio+twophase | collio+dynamic | collio+static | collio+tam) echo "-hint collio_strategy=${1#collio+}" ;;
	esac
}

if [ ! -x "$COLLPERF" ] || [ ! -x "$IORBENCH" ] || [ ! -x "$PATTERNS" ] || [ ! -x "$BENCHREPORT" ]; then
	echo "bench: building bin/collperf, bin/iorbench, bin/patterns and bin/benchreport" >&2
	(cd "$root" && go build -o "$root/bin/" ./cmd/collperf ./cmd/iorbench ./cmd/patterns)
	# benchreport is a module of its own (its plotting library stays out of collio's go.mod).
	(cd "$root/cmd/benchreport" && go build -o "$root/bin/" .)
fi

# Launcher flags: root needs --allow-run-as-root; more ranks than cores on
# one machine needs --oversubscribe (not added when MPIRUN_ARGS is set, as
# on a cluster with a hostfile).
launcher=()
[ "$(id -u)" = 0 ] && launcher+=(--allow-run-as-root)
ncores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
if [ -z "$MPIRUN_ARGS" ] && [ "$NP" -gt "$ncores" ]; then
	launcher+=(--oversubscribe)
fi
# shellcheck disable=SC2206 # MPIRUN_ARGS and COLLPERF_ARGS are word lists on purpose
launcher+=($MPIRUN_ARGS)
# shellcheck disable=SC2206
extra=($COLLPERF_ARGS)
# shellcheck disable=SC2206
bench_extra=($BENCH_ARGS)
# shellcheck disable=SC2206
ior_small=($IOR_SMALL_ARGS)
# shellcheck disable=SC2206
ior_large=($IOR_LARGE_ARGS)
# shellcheck disable=SC2206
pattern_args=($PATTERN_ARGS)
export MPIEXEC_TIMEOUT=$LAUNCH_TIMEOUT

now() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		echo "${EPOCHREALTIME/,/.}"
	else
		date +%s
	fi
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Storage directories: label and a fresh subdirectory of each.
labels=()
dirs=()
cleanup=()
trap 'for d in ${cleanup[@]+"${cleanup[@]}"}; do rm -rf "$d"; done' EXIT
if [ -n "$BENCH_TMPFS_DIR" ]; then
	[ -d "$BENCH_TMPFS_DIR" ] || die "BENCH_TMPFS_DIR=$BENCH_TMPFS_DIR: no such directory"
	d=$(mktemp -d "$BENCH_TMPFS_DIR/collio-bench.XXXXXX")
	cleanup+=("$d")
	labels+=(tmpfs)
	dirs+=("$d")
fi
if [ -n "$BENCH_DISK_DIR" ]; then
	[ -d "$BENCH_DISK_DIR" ] || die "BENCH_DISK_DIR=$BENCH_DISK_DIR: no such directory"
	d=$(mktemp -d "$BENCH_DISK_DIR/collio-bench.XXXXXX")
else
	d=$(mktemp -d /var/tmp/collio-bench.XXXXXX)
fi
cleanup+=("$d")
labels+=(disk)
dirs+=("$d")
if [ -n "$SIM_VARIANTS" ]; then
	labels+=(sim)
	dirs+=("$d") # the sim driver keeps its bytes in the disk directory
fi

stamp=$(date +%Y%m%d-%H%M%S)
raw=$RESULTS/raw/$stamp
mkdir -p "$raw"
printf '# seq\tlabel\tvariant\tdir\trc\tseconds\tjson\tcommand\n' >"$raw/launches.tsv"
notes=()

# The patterns run in one launch per variant (-pattern a,b,c); btio needs
# a square number of ranks.
pats=()
launch_workloads=()
for w in $WORKLOADS; do
	case $w in
	flash | e3sm | s3d) pats+=("$w") ;;
	btio)
		r=$(awk -v n="$NP" 'BEGIN { r = int(sqrt(n) + 0.5); print (r * r == n) ? 1 : 0 }')
		if [ "$r" = 1 ]; then
			pats+=(btio)
		else
			notes+=("btio skipped: it needs a square number of ranks, NP=$NP")
			echo "bench: ${notes[-1]}" >&2
		fi
		;;
	*) launch_workloads+=("$w") ;;
	esac
done
if [ ${#pats[@]} -gt 0 ]; then
	launch_workloads+=(patterns)
fi
pattern_list=$(
	IFS=,
	echo "${pats[*]}"
)

collperf_warmup=()
if [ "$INTERLEAVE" = 1 ]; then
	rounds=$REPS
	iters=1
	# A launch's only write would otherwise be its first, which
	# allocates the file's pages.
	collperf_warmup=(-warmup)
else
	rounds=1
	iters=$REPS
fi
nvariants=$(echo "$VARIANTS" | wc -w)
nsim=$(echo "$SIM_VARIANTS" | wc -w)
nw=${#launch_workloads[@]}
[ "$nw" -gt 0 ] || die "WORKLOADS=$WORKLOADS: nothing left to run"
total=$((rounds * nw * (${#dirs[@]} * nvariants - (nsim > 0 ? nvariants - nsim : 0))))
echo "bench: np $NP, collperf size $SIZE, $REPS repetition(s) ($rounds round(s) of -i $iters), ${#dirs[@]} dir(s), $nvariants variant(s), workloads: $WORKLOADS: $total launches; raw results in $raw"

seq=0
failed=0
start_all=$(now)
for ((round = 1; round <= rounds; round++)); do
	for i in "${!dirs[@]}"; do
		label=${labels[$i]}
		dir=${dirs[$i]}
		variants=$VARIANTS
		[ "$label" = sim ] && variants=$SIM_VARIANTS
		if [ "$round" = 1 ] && [ "$label" != sim ] && [ "$WARMUP" = 1 ]; then
			# One untimed launch first, so that the first variant does not
			# alone meet the storage cold (as coll_perf writes and reads
			# once untimed "to eliminate paging effects"): in one run the
			# first variant, collio's automatic choice (independent I/O
			# here), wrote 24% slower than independent I/O forced later.
			"$MPIRUN" ${launcher[@]+"${launcher[@]}"} -np "$NP" "$COLLPERF" -q -impl mpiio -i 1 -dir "$dir" \
				-size "$SIZE" >"$raw/warmup-$label.log" 2>&1 || echo "bench: warm-up launch on $dir failed (see $raw/warmup-$label.log)" >&2
		fi
		for v in $variants; do
			flags=()
			case $v in
			collio*)
				mca=() impl=collio
				# shellcheck disable=SC2207 # presets are word lists
				flags=(-name "$v" $(preset "$v"))
				[ "$label" = sim ] && flags+=(-driver sim "${SIM_HINTS[@]}")
				;;
			default) mca=() impl=mpiio ;;
			ompio/*) mca=(--mca io ompio --mca fcoll "${v#ompio/}") impl=mpiio ;;
			romio*) mca=(--mca io "$v") impl=mpiio ;;
			esac
			for w in "${launch_workloads[@]}"; do
				seq=$((seq + 1))
				name=$(printf '%03d-%s-%s-%s' "$seq" "$label" "$(echo "$v" | tr / _)" "$w")
				json=$raw/$name.json
				common=(-q -impl "$impl" -i "$iters" -label "$label" -json "$json" ${flags[@]+"${flags[@]}"}
					${bench_extra[@]+"${bench_extra[@]}"})
				case $w in
				collperf)
					prog=("$COLLPERF" "${common[@]}" -dir "$dir" -size "$SIZE" ${collperf_warmup[@]+"${collperf_warmup[@]}"}
						${extra[@]+"${extra[@]}"}) ;;
				ior-small)
					prog=("$IORBENCH" "${common[@]}" -workload ior-small -o "$dir/ior-small" -c -w -r -R -C
						${ior_small[@]+"${ior_small[@]}"}) ;;
				ior-large)
					prog=("$IORBENCH" "${common[@]}" -workload ior-large -o "$dir/ior-large" -c -w -r -R -C -e
						${ior_large[@]+"${ior_large[@]}"}) ;;
				patterns)
					prog=("$PATTERNS" "${common[@]}" -pattern "$pattern_list" -dir "$dir"
						${pattern_args[@]+"${pattern_args[@]}"}) ;;
				esac
				cmd=("$MPIRUN" ${launcher[@]+"${launcher[@]}"} -np "$NP" ${mca[@]+"${mca[@]}"} "${prog[@]}")
				printf -v cmdline '%q ' "${cmd[@]}"
				t0=$(now)
				rc=0
				"${cmd[@]}" >"$raw/$name.log" 2>&1 || rc=$?
				secs=$(elapsed "$t0" "$(now)")
				printf '%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n' "$seq" "$label" "$v $w" "$dir" "$rc" "$secs" "$json" "${cmdline% }" >>"$raw/launches.tsv"
				if [ "$rc" = 0 ]; then
					printf 'bench: [%d/%d] %-5s %-18s %-9s %6ss (%ss)\n' "$seq" "$total" "$label" "$v" "$w" "$secs" "$(elapsed "$start_all" "$(now)")"
				else
					failed=1
					printf 'bench: [%d/%d] %-5s %-18s %-9s %6ss FAILED (exit %d); last lines of %s:\n' "$seq" "$total" "$label" "$v" "$w" "$secs" "$rc" "$raw/$name.log" >&2
					tail -n 5 "$raw/$name.log" | sed 's/^/    /' >&2
				fi
			done
		done
	done
done
wall=$(elapsed "$start_all" "$(now)")

# The command as it could be typed again, with every setting spelled out.
bench_cmd="NP=$NP SIZE=$SIZE REPS=$REPS QUICK=$QUICK INTERLEAVE=$INTERLEAVE WARMUP=$WARMUP BENCH_TMPFS_DIR=$BENCH_TMPFS_DIR WORKLOADS='$WORKLOADS'"
bench_cmd+=" IOR_SMALL_ARGS='$IOR_SMALL_ARGS' IOR_LARGE_ARGS='$IOR_LARGE_ARGS' PATTERN_ARGS='$PATTERN_ARGS'"
[ -n "$BENCH_DISK_DIR" ] && bench_cmd+=" BENCH_DISK_DIR=$BENCH_DISK_DIR"
[ -n "$MPIRUN_ARGS" ] && bench_cmd+=" MPIRUN_ARGS='$MPIRUN_ARGS'"
[ -n "$COLLPERF_ARGS" ] && bench_cmd+=" COLLPERF_ARGS='$COLLPERF_ARGS'"
[ -n "$BENCH_ARGS" ] && bench_cmd+=" BENCH_ARGS='$BENCH_ARGS'"
bench_cmd+=" VARIANTS='$VARIANTS' SIM_VARIANTS='$SIM_VARIANTS' scripts/bench.sh    # $seq launches, ${wall}s of benchmark wall time"

note_flags=()
for n in ${notes[@]+"${notes[@]}"}; do
	note_flags+=(-note "$n")
done
echo
rm -f "$RESULTS"/bench-bandwidth-*.png "$RESULTS"/bench-breakdown-*.png
"$BENCHREPORT" -in "$raw" -md "$RESULTS/bench.md" -json "$RESULTS/bench.json" -cmd "$bench_cmd" ${note_flags[@]+"${note_flags[@]}"}
echo
echo "bench: wrote $RESULTS/bench.md (the report) and $RESULTS/bench.json; raw: $raw"
plots=$(ls "$RESULTS"/bench-bandwidth-*.png "$RESULTS"/bench-breakdown-*.png 2>/dev/null | tr '\n' ' ')
echo "bench: plots: ${plots:-none}"
for n in ${notes[@]+"${notes[@]}"}; do
	echo "bench: note: $n"
done
echo "bench: benchmark wall time ${wall}s"
exit "$failed"
