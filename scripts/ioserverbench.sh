#!/usr/bin/env bash
# The I/O server benchmark (cmd/ioserverbench): a checkpoint of PHASES
# write phases with compute in between on NP-1 compute ranks, handed to
# one I/O server rank, written with two-phase, and through the E10 cache,
# over the emulated slow file system (sim); then a pattern whose phases
# rewrite the last one's bytes with no compute between, for the servers'
# Compactor counts. Writes results/ioserver/ioserver.md.
#
#   make ioserverbench      # or scripts/ioserverbench.sh after make build; about half a minute
#   NP=4 PHASES=4 BLOCK=8m COMPUTE=500ms SIM_BW=25m scripts/ioserverbench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NP=${NP:-4} PHASES=${PHASES:-4} BLOCK=${BLOCK:-8m} COMPUTE=${COMPUTE:-500ms} SIM_BW=${SIM_BW:-25m}
CACHE_DIR=${CACHE_DIR:-/dev/shm} OUT=${OUT:-results/ioserver}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/collio-ioserver.XXXXXX")
trap 'rm -rf "$work"' EXIT
common=(-dir "$work" -cache-dir "$CACHE_DIR" -sim-bw "$SIM_BW" -servers 1)
{
	echo "Command: NP=$NP PHASES=$PHASES BLOCK=$BLOCK COMPUTE=$COMPUTE SIM_BW=$SIM_BW scripts/ioserverbench.sh ($(date -u +%F))"
	echo
	mpirun -q -np "$NP" bin/ioserverbench "${common[@]}" -phases "$PHASES" -block "$BLOCK" -compute "$COMPUTE"
	echo
	mpirun -q -np "$NP" bin/ioserverbench "${common[@]}" -phases $((2 * PHASES)) -block "$BLOCK" -compute 0s -pattern rewrite
} > "$OUT/ioserver.md"
cat "$OUT/ioserver.md"
