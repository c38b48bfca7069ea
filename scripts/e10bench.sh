#!/usr/bin/env bash
# The E10 node-local cache benchmark: collperf's write phases with compute
# in between (collperf -phases), the global file on the emulated striped
# file system (driver sim) with a low bandwidth, the cache on a fast local
# directory. One launch without the cache, one with it (flush_immediate,
# deferred close: E10 with MPIWRAP), each sweeping the compute times; then
# a markdown table of perceived bandwidth against the paper's model
# bw = S / (Tc + max(0, Ts - C)), computed from the same run's Tc and Ts.
#
#   make e10bench           # or scripts/e10bench.sh after make build; about a minute
#   NP=4 SIZE=256 PHASES=4 COMPUTE=0,250ms,500ms,1s,2s SIM_BW=25m scripts/e10bench.sh
#
# Settings (environment variables):
#   NP=4                ranks
#   SIZE=256            collperf's global array (256 -> 64 MiB per phase)
#   PHASES=4            write phases per compute time
#   COMPUTE=0,250ms,500ms,1s,2s   compute times between phases (shorter and longer than the sync)
#   SIM_BW=25m          bandwidth of each of the sim driver's 4 targets (the "parallel file system")
#   CACHE_DIR=/dev/shm  where the cache files go (a node-local device)
#   BUSY=0              1: compute by spinning instead of sleeping (competes with the copy for CPU)
#   OUT=results/e10     JSON files and e10.md go here
set -euo pipefail
cd "$(dirname "$0")/.."
NP=${NP:-4} SIZE=${SIZE:-256} PHASES=${PHASES:-4} COMPUTE=${COMPUTE:-0,250ms,500ms,1s,2s}
SIM_BW=${SIM_BW:-25m} CACHE_DIR=${CACHE_DIR:-/dev/shm} BUSY=${BUSY:-0} OUT=${OUT:-results/e10}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/collio-e10.XXXXXX")
cache=$(mktemp -d "$CACHE_DIR/collio-e10-cache.XXXXXX")
trap 'rm -rf "$work" "$cache"' EXIT
busy=()
[ "$BUSY" = 1 ] && busy=(-compute-busy)
common=(-dir "$work" -impl collio -driver sim -size "$SIZE" -phases "$PHASES" -compute "$COMPUTE" -sync=false
	"${busy[@]}" -hint collio_sim_bandwidth="$SIM_BW" -q)
run() { # label, hints...
	local label=$1
	shift
	echo "e10bench: $label" >&2
	mpirun -np "$NP" bin/collperf "${common[@]}" -label "$label" -json "$OUT/$label.json" "$@"
}
start=$(date +%s)
run no-cache
run cache -hint e10_cache=enable -hint e10_cache_path="$cache" -hint e10_cache_deferred_close=enable
run cache-onclose -hint e10_cache=enable -hint e10_cache_path="$cache" -hint e10_cache_deferred_close=enable \
	-hint e10_cache_flush_flag=flush_onclose
{
	echo "E10 cache benchmark: collperf, $NP ranks, array $SIZE^3 int32, $PHASES write phases per compute time,"
	echo "global file on sim (4 targets x $SIM_BW/s), cache in $CACHE_DIR; $(date -u +%F), $(($(date +%s) - start)) s."
	echo "Command: NP=$NP SIZE=$SIZE PHASES=$PHASES COMPUTE=$COMPUTE SIM_BW=$SIM_BW BUSY=$BUSY scripts/e10bench.sh"
	echo
	bin/benchreport -e10 "$OUT/no-cache.json" "$OUT/cache.json" "$OUT/cache-onclose.json"
} > "$OUT/e10.md"
cat "$OUT/e10.md"
