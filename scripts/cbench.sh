#!/usr/bin/env bash
# cbench: the same C programs run plain on the host MPI-IO (Open MPI's OMPIO
# with a chosen fcoll component, or ROMIO) and with libcollio preloaded
# (mpirun -x LD_PRELOAD=bin/libcollio.so), as separate launches that
# alternate: every round runs every variant once per cell (program, np,
# directory, call size), in an order that rotates from round to round.
# Figures are medians over the rounds; ratios are to the best host variant of
# the same run. See docs/benchmarks.md; settings: scripts/cbench.sh -h.
#
# The launcher, the parsing of the programs' output, the statistics and the
# report are `benchreport cbench` (cmd/benchreport, a module of its own);
# this builds it and hands over.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root/cmd/benchreport" && "${GO:-go}" build -o "$root/bin/" .)
exec "$root/bin/benchreport" cbench -root "$root" "$@"
