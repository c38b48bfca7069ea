#!/usr/bin/env bash
# The cost per piece of one collective call with many tiny noncontiguous
# pieces (E3SM's flushes): bench/c/pieces.c, the same C binary run plain
# through host MPI-IO variants and with libcollio preloaded, as separate
# launches whose order rotates every round. Writes results/pieces.md: ns per
# piece for the whole write and read (set_view included), for the set_view
# alone (flattening the file type), and for collio the slowest rank's plan,
# request exchange, data exchange and file I/O per piece (COLLIO_STATS).
#
#   make lib && scripts/pieces.sh             # defaults below; about 5 minutes on 2 cores
#   COUNTS="100000 1000000" NP=4 ROUNDS=1 scripts/pieces.sh
#
# Settings (environment variables):
#   COUNTS="100000 1000000 10000000"  pieces in the file, over all ranks (8 to 64 bytes each)
#   NP="4 16"          ranks per launch
#   RUN=2              mean pieces in a row from one rank (pieces.c -l)
#   ROUNDS=2           launches per variant and cell; medians are reported
#   DIR=/dev/shm       where the file goes
#   VARIANTS="romio321 individual default collio collio:twophase"
#                      host variants: romio321, individual, vulcan, two_phase (OMPIO fcoll), default
#                      (Open MPI's own choice); collio, or collio:<strategy>
#   LIBCOLLIO=bin/libcollio.so   RESULTS=results
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
fi
COUNTS=${COUNTS:-"100000 1000000 10000000"}
NP=${NP:-"4 16"}
RUN=${RUN:-2}
ROUNDS=${ROUNDS:-2}
DIR=${DIR:-/dev/shm}
VARIANTS=${VARIANTS:-"romio321 individual default collio collio:twophase"}
LIBCOLLIO=$(realpath "${LIBCOLLIO:-bin/libcollio.so}")
RESULTS=${RESULTS:-results}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

[ -f "$LIBCOLLIO" ] || { echo "pieces.sh: $LIBCOLLIO missing: run make lib" >&2; exit 2; }
mkdir -p bin "$RESULTS"
mpicc -O2 -Wall -o bin/pieces bench/c/pieces.c
# The medians and the table: benchreport pieces (cmd/benchreport, a module of its own).
(cd cmd/benchreport && go build -o ../../bin/ .)
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
tsv="$RESULTS/pieces.tsv"
printf 'n\tnp\tvariant\tround\tline\tstats\n' >"$tsv"

args_of() { # variant -> mpirun arguments and pieces.c hints
	case $1 in
	romio321) echo "--mca io romio321|" ;;
	individual | vulcan | two_phase) echo "--mca io ompio --mca fcoll $1|" ;;
	default) echo "|" ;;
	collio) echo "-x LD_PRELOAD=$LIBCOLLIO|" ;;
	collio:*) echo "-x LD_PRELOAD=$LIBCOLLIO|collio_strategy=${1#collio:}" ;;
	*) echo "pieces.sh: unknown variant $1" >&2; exit 2 ;;
	esac
}

failed=0
for n in $COUNTS; do
	for np in $NP; do
		read -ra vs <<<"$VARIANTS"
		for ((round = 0; round < ROUNDS; round++)); do
			for ((k = 0; k < ${#vs[@]}; k++)); do
				v=${vs[(k + round) % ${#vs[@]}]}
				IFS='|' read -r mpiargs hint <<<"$(args_of "$v")"
				stats="$raw/$n.$np.$v.$round.json"
				# shellcheck disable=SC2086 # mpiargs is a list of arguments
				if line=$(timeout 600 mpirun -np "$np" $mpiargs -x COLLIO_STATS="$stats" bin/pieces -n "$n" -l "$RUN" \
					-f "$DIR/pieces.$$.dat" ${hint:+-H "$hint"} 2>"$raw/err" | tail -1) && [[ $line == *verified=yes* ]]; then
					:
				else
					failed=1
					line="FAILED: $(tail -3 "$raw/err" | tr '\n' ' ')"
				fi
				[ -f "$stats" ] || stats=-
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$np" "$v" "$round" "$line" "$stats" >>"$tsv"
				echo "n=$n np=$np $v: $line" >&2
			done
		done
	done
done

bin/benchreport pieces "$tsv" "$RESULTS/pieces.md"
exit $failed
