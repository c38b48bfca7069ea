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
python3 - "$tmp" "$NP" $MODES <<'PY'
import glob, statistics, sys
tmp, np, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
mib = np * 256 * 512 / 1024  # MiB per repetition
first = None
for mode in modes:
    xfer, span = [], []
    for f in glob.glob(f"{tmp}/{mode}.*"):
        reps = {}
        for line in open(f):
            _, rep, t0, t1 = map(int, line.split())
            reps.setdefault(rep, []).append((t0, t1))
        for rep, v in reps.items():
            if rep == 0:
                continue
            xfer.append(mib / (max(b - a for a, b in v) / 1e9))
            span.append(mib / ((max(b for _, b in v) - min(a for a, _ in v)) / 1e9))
    x, s = statistics.median(xfer), statistics.median(span)
    first = first or x
    print(f"{mode:7s} {x:8.0f} MiB/s (span {s:.0f}), {x / first:.3f} of {modes[0]}, n={len(xfer)}")
PY
