#!/usr/bin/env bash
# Alternates collperf launches of collio and of one host MPI-IO variant
# (taking turns going first), so that machine noise falls on both alike, and prints the medians and their
# ratio: writes after the first of each launch (they overwrite allocated
# pages) and all reads. Each is timed three ways: as coll_perf does (every
# rank from its own start of the transfer after a barrier; the slowest
# rank's time), the transfer's span (the first rank's start to the last
# rank's end) and as IOR does (the first rank's open to the last rank's
# close, with MPI_File_sync after writes).
#
#   scripts/pair.sh                                  # two-phase against OMPIO individual, np 4
#   NP=2 N=4 scripts/pair.sh
#   HINTS="-hint romio_cb_write=disable" HOST="--mca io romio321" scripts/pair.sh
#   BASE=/tmp/collperf-before scripts/pair.sh        # also another collperf build (a change's effect)
#   BASE_HINTS="-hint collio_strategy=twophase -hint collio_overlap=disable" scripts/pair.sh
#   INTERLEAVE=1 BASE=/tmp/collperf-before scripts/pair.sh
#
# Settings: NP=4 ranks, N=6 pairs of launches, SIZE=512 (N^3 int32), REPS=4
# per launch, DIR=/dev/shm/collio-pair, HINTS (collperf flags for collio;
# default -hint collio_strategy=twophase), HOST (mpirun flags of the host
# variant; default --mca io ompio --mca fcoll individual), BASE (another
# collperf binary run with the same flags in each round, reported as "base"),
# BASE_HINTS (the base run's collio flags instead of HINTS; without BASE the
# base run is this build's collperf: one build, two hint sets).
#
# INTERLEAVE=1 runs collio and the host variant in one launch, repetition
# by repetition (collperf -interleave), and also reports the median over
# launches of each launch's own ratio: launches differ by more (memory
# state) than repetitions in one launch do. HINTS then reach the host
# MPI-IO too (use collio_ hints only), and BASE must know -interleave.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
NP=${NP:-4} N=${N:-6} SIZE=${SIZE:-512} REPS=${REPS:-4} DIR=${DIR:-/dev/shm/collio-pair}
HINTS=${HINTS:-"-hint collio_strategy=twophase"}
HOST=${HOST:-"--mca io ompio --mca fcoll individual"}
INTERLEAVE=${INTERLEAVE:-0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -x "$root/bin/collperf" ] || (cd "$root" && go build -o bin/ ./cmd/collperf)
# The medians and ratios: benchreport pair (cmd/benchreport, a module of its own).
(cd "$root/cmd/benchreport" && go build -o "$root/bin/" .)
BASE_HINTS=${BASE_HINTS:-$HINTS}
if [ -z "${BASE:-}" ] && [ "$BASE_HINTS" != "$HINTS" ]; then
	BASE=$root/bin/collperf
fi
mkdir -p "$DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$DIR"' EXIT
common=(-q -dir "$DIR" -size "$SIZE" -i "$REPS")
for k in $(seq "$N"); do
	if [ "$INTERLEAVE" = 1 ]; then
		# shellcheck disable=SC2086
		mpirun -np "$NP" $HOST "$root/bin/collperf" "${common[@]}" -impl collio,mpiio -interleave $HINTS \
			-json "$tmp/collio-$k.json" >/dev/null
		if [ -n "${BASE:-}" ]; then
			# shellcheck disable=SC2086
			mpirun -np "$NP" $HOST "$BASE" "${common[@]}" -impl collio,mpiio -interleave $BASE_HINTS \
				-json "$tmp/base-$k.json" >/dev/null
		fi
	else
		# The launches of a round take turns going first, so that neither
		# side always follows the other (memory and page-cache state).
		sides=(collio host)
		[ -n "${BASE:-}" ] && sides=(collio base host)
		for ((j = 0; j < ${#sides[@]}; j++)); do
			side=${sides[$(((j + k) % ${#sides[@]}))]}
			case $side in
			collio) # shellcheck disable=SC2086
				mpirun -np "$NP" "$root/bin/collperf" "${common[@]}" -impl collio $HINTS \
					-json "$tmp/collio-$k.json" >/dev/null ;;
			base) # shellcheck disable=SC2086
				mpirun -np "$NP" "$BASE" "${common[@]}" -impl collio $BASE_HINTS \
					-json "$tmp/base-$k.json" >/dev/null ;;
			host) # shellcheck disable=SC2086
				mpirun -np "$NP" $HOST "$root/bin/collperf" "${common[@]}" -impl mpiio \
					-json "$tmp/host-$k.json" >/dev/null ;;
			esac
		done
	fi
	echo "pair: $k/$N done" >&2
done
"$root/bin/benchreport" pair "$tmp"
