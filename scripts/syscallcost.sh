#!/usr/bin/env bash
# Alternates launches of cmd/syscallcost in each mode and prints the median
# bandwidth of each (the first repetition of a launch is skipped), timed as
# collperf does (each rank from its own start, the slowest rank) and as
# IOR does (first start to last end). See cmd/syscallcost for the modes.
#
#   scripts/syscallcost.sh                                   # writes to /var/tmp
#   MODES="goread cread" scripts/syscallcost.sh
#   DIR=/dev/shm/collio-syscallcost N=3 scripts/syscallcost.sh
#
# Settings: MODES ("go raw c c32"), N=4 launches per mode, NP=4 (even),
# DIR=/var/tmp/collio-syscallcost.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
MODES=${MODES:-"go raw c c32"} N=${N:-4} NP=${NP:-4} DIR=${DIR:-/var/tmp/collio-syscallcost}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -x "$root/bin/syscallcost" ] || (cd "$root" && go build -o bin/ ./cmd/syscallcost)
# The medians: benchreport syscallcost (cmd/benchreport, a module of its own).
(cd "$root/cmd/benchreport" && go build -o "$root/bin/" .)
mkdir -p "$DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$DIR"' EXIT
for k in $(seq "$N"); do
	for mode in $MODES; do
		start=$(($(date +%s%N) + 1500000000))
		mpirun -np "$NP" "$root/bin/syscallcost" -mode "$mode" -dir "$DIR" -start "$start" >"$tmp/$mode.$k"
	done
	echo "syscallcost: $k/$N done" >&2
done
# shellcheck disable=SC2086 # MODES is a word list
"$root/bin/benchreport" syscallcost -np "$NP" "$tmp" $MODES
