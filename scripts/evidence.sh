#!/usr/bin/env bash
# Reproduces the simulator's evidence in docs/evidence/: runs each scenario with switchyard-sim
# (release build), writes its table (.txt), its figures (.csv) and its plot (.svg, gnuplot).
# usage: scripts/evidence.sh [backoff|amplification|outage|throttling]...   (default: all four)
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release >/dev/null
cmake --build build/release -j2 --target switchyard-sim >/dev/null
SIM=build/release/tools/sim/switchyard-sim
DIR=docs/evidence

run() {
    local name=$1
    shift
    echo "== $name: $SIM $DIR/scenarios/$name.yaml $*"
    "$SIM" "$DIR/scenarios/$name.yaml" --csv "$DIR/$name.csv" "$@" | tee "$DIR/$name.txt"
}

# Pivots a gateway scenario's CSV to one row per variant with the named columns (a `sweep`
# value, if given, selects the rows of that sweep value).
pivot() {
    local csv=$1 sweep=$2
    shift 2
    awk -F, -v sweep="$sweep" -v want="$*" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(want, names, " "); next }
        sweep == "" || $2 == sweep {
            line = $1
            for (k = 1; k <= n; k++) line = line " " $(col[names[k]])
            print line
        }' "$csv"
}

backoff() {
    run backoff
    gnuplot "$DIR/plots/backoff.gp"
}

amplification() {
    run amplification
    {
        echo "# variant outage brownout outage_ok brownout_ok"
        join <(pivot "$DIR/amplification.csv" outage upstream_per_request availability_pct |
                   awk '{ print NR, $0 }') \
             <(pivot "$DIR/amplification.csv" brownout upstream_per_request availability_pct |
                   awk '{ print NR, $0 }') |
            awk '{ print $2, $3, $6, $4, $7 }'
    } > "$DIR/amplification.dat"
    gnuplot "$DIR/plots/amplification.gp"
}

outage() {
    run outage --timeline "$DIR/outage-timeline.csv"
    gnuplot "$DIR/plots/outage.gp"
}

throttling() {
    run throttling
    {
        echo "# variant upstream_429 ok shed interactive_ok interactive_p50_s"
        pivot "$DIR/throttling.csv" "" upstream_429 ok shed interactive.ok_pct \
            interactive.p50_ok_ms | awk '{ printf "%s %s %s %s %s %.2f\n", $1, $2, $3, $4, $5, $6 / 1000 }'
    } > "$DIR/throttling.dat"
    gnuplot "$DIR/plots/throttling.gp"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(backoff amplification outage throttling)
for target in "${targets[@]}"; do
    case "$target" in
        backoff | amplification | outage | throttling) "$target" ;;
        *) echo "usage: $0 [backoff|amplification|outage|throttling]..." >&2; exit 2 ;;
    esac
done
