#!/usr/bin/env bash
# Alternates collperf launches of collio and of one host MPI-IO variant, so
# that machine noise falls on both alike, and prints the medians and their
# ratio: writes after the first of each launch (they overwrite allocated
# pages) and all reads. Each is timed two ways: as coll_perf does (every
# rank from its own start after the barrier; the slowest rank's time) and
# as IOR does ("span": the first rank's start to the last rank's end).
#
#   scripts/pair.sh                                  # two-phase against OMPIO individual, np 4
#   NP=2 N=4 scripts/pair.sh
#   HINTS="-hint romio_cb_write=disable" HOST="--mca io romio321" scripts/pair.sh
#   BASE=/tmp/collperf-before scripts/pair.sh        # also another collperf build (a change's effect)
#
# Settings: NP=4 ranks, N=6 pairs of launches, SIZE=512 (N^3 int32), REPS=4
# per launch, DIR=/dev/shm/collio-pair, HINTS (collperf flags for collio;
# default -hint collio_strategy=twophase), HOST (mpirun flags of the host
# variant; default --mca io ompio --mca fcoll individual), BASE (another
# collperf binary run with the same flags in each round, reported as "base").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
NP=${NP:-4} N=${N:-6} SIZE=${SIZE:-512} REPS=${REPS:-4} DIR=${DIR:-/dev/shm/collio-pair}
HINTS=${HINTS:-"-hint collio_strategy=twophase"}
HOST=${HOST:-"--mca io ompio --mca fcoll individual"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -x "$root/bin/collperf" ] || (cd "$root" && go build -o bin/ ./cmd/collperf)
mkdir -p "$DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$DIR"' EXIT
for k in $(seq "$N"); do
	# shellcheck disable=SC2086
	mpirun -np "$NP" "$root/bin/collperf" -q -dir "$DIR" -size "$SIZE" -i "$REPS" -impl collio $HINTS \
		-json "$tmp/collio-$k.json" >/dev/null
	if [ -n "${BASE:-}" ]; then
		# shellcheck disable=SC2086
		mpirun -np "$NP" "$BASE" -q -dir "$DIR" -size "$SIZE" -i "$REPS" -impl collio $HINTS \
			-json "$tmp/base-$k.json" >/dev/null
	fi
	# shellcheck disable=SC2086
	mpirun -np "$NP" $HOST "$root/bin/collperf" -q -dir "$DIR" -size "$SIZE" -i "$REPS" -impl mpiio \
		-json "$tmp/host-$k.json" >/dev/null
	echo "pair: $k/$N done" >&2
done
python3 - "$tmp" <<'PY'
import glob, json, statistics, sys
vals = {}
for f in glob.glob(sys.argv[1] + "/*.json"):
    side = f.rsplit("/", 1)[1].split("-")[0]
    for r in json.load(open(f))["results"]:
        if r["op"] == "read" or r["iter"] > 1:
            vals.setdefault((r["op"], side, "xfer"), []).append(r["xfer_mib_s"])
            vals.setdefault((r["op"], side, "span"), []).append(r.get("span_mib_s", 0))
for op in ("write", "read"):
    for how, name in (("xfer", "coll_perf timing"), ("span", "IOR timing (span)")):
        c, h = statistics.median(vals[(op, "collio", how)]), statistics.median(vals[(op, "host", how)])
        n, m = len(vals[(op, "collio", how)]), len(vals[(op, "host", how)])
        if h > 0:
            print(f"{op}, {name}: collio median {c:.0f} MiB/s (n={n}), host {h:.0f} (n={m}), ratio {c / h:.3f}")
        if (op, "base", how) in vals:
            b = statistics.median(vals[(op, "base", how)])
            print(f"{op}, {name}: base median {b:.0f} MiB/s, ratio {b / h:.3f}")
PY
