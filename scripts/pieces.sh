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

python3 - "$tsv" "$RESULTS/pieces.md" <<'EOF'
import json, statistics, sys
tsv, out = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(tsv)][1:]
cells, order = {}, []
for n, np, v, rnd, line, stats in rows:
    key = (int(n), int(np))
    if key not in cells:
        cells[key] = {}
        order.append(key)
    c = cells[key].setdefault(v, {"w": [], "r": [], "view": [], "parts": [], "failed": 0})
    if line.startswith("FAILED"):
        c["failed"] += 1
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    c["w"].append(float(f["write_ns_piece"]))
    c["r"].append(float(f["read_ns_piece"]))
    c["view"].append(float(f["view_ns_piece"]))
    if stats != "-":
        s = json.loads(open(stats).readline())
        cw = s["collective_write"]
        c["parts"].append([cw[k]["max"] / int(n) for k in ("plan_ns", "req_exchange_ns", "shuffle_ns", "io_ns")])
med = lambda xs: statistics.median(xs) if xs else float("nan")
with open(out, "w") as o:
    o.write("# Cost per piece: bench/c/pieces.c (scripts/pieces.sh)\n\n")
    o.write("ns per piece over all pieces; medians of the rounds. write/read include set_view; view is the\n")
    o.write("set_view alone. For collio, the slowest rank's write phases per piece (COLLIO_STATS).\n")
    o.write("Ratio: the variant's write time to the best host variant's.\n\n")
    for key in order:
        n, np = key
        o.write(f"## {n} pieces, np {np}\n\n")
        o.write("| variant | write | read | view | write / best host | plan | request exchange | data exchange | file I/O |\n")
        o.write("|---|---|---|---|---|---|---|---|---|\n")
        host = [med(c["w"]) for v, c in cells[key].items() if not v.startswith("collio") and c["w"]]
        best = min(host) if host else float("nan")
        for v, c in cells[key].items():
            parts = [med([p[i] for p in c["parts"]]) for i in range(4)] if c["parts"] else []
            ps = " | ".join(f"{x:.1f}" for x in parts) if parts else " |  |  | "
            fail = f" ({c['failed']} failed)" if c["failed"] else ""
            o.write(f"| {v}{fail} | {med(c['w']):.1f} | {med(c['r']):.1f} | {med(c['view']):.1f} | {med(c['w'])/best:.2f} | {ps} |\n")
        o.write("\n")
print(open(out).read())
EOF
exit $failed
