#!/usr/bin/env bash
# Reproduces the simulator's evidence in docs/evidence/: runs each scenario with switchyard-sim
# (release build), writes its table (.txt), its figures (.csv) and its plot (.svg, gnuplot).
# usage: scripts/evidence.sh [backoff|amplification|outage|throttling|defaults|slow]...
#        (default: all six; `defaults` is the sweep behind health.allowed_failure_rate)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh bench >/dev/null
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

# The outage scenario over the cooldown's failure-rate threshold (0 is the count-only rule), at
# 5 and 50 requests/s and in 10 % brown-outs at 20 requests/s: availability and upstream calls per
# request, without and with the fallback; means of 2 seeds.
defaults() {
    local sweep='{path: gateway.health.allowed_failure_rate, values: [0, 0.1, 0.2, 0.3, 0.5]}'
    local csv
    csv=$(mktemp)
    {
        printf '%-38s %-6s %16s %16s %16s %16s\n' case af_rate no-fallback_ok% no-fb_calls/req \
            fallback_ok% fallback_calls/req
        for load in "5 requests/s, 10 min outage|5|status=529" \
                    "50 requests/s, 10 min outage|50|status=529" \
                    "20 requests/s, 10 min 10 % brown-out|20|status=529; probability=0.1"; do
            IFS='|' read -r label rate fault <<< "$load"
            "$SIM" "$DIR/scenarios/outage.yaml" --runs 2 --csv "$csv" --set "sweep=$sweep" \
                --set "clients.0.rate_per_s=$rate" \
                --set "providers.claude-a.faults.0.fault=$fault" >/dev/null
            awk -F, -v label="$label" '
                NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                $1 == "no-fallback" { nf[$2] = $(col["availability_pct"]); nc[$2] = $(col["upstream_per_request"]) }
                $1 == "fallback" { f[$2] = $(col["availability_pct"]); c[$2] = $(col["upstream_per_request"]); order[++n] = $2 }
                END { for (k = 1; k <= n; k++) { r = order[k]
                      printf "%-38s %-6s %16.3f %16.3f %16.3f %16.3f\n", label, r, nf[r], nc[r], f[r], c[r] } }' "$csv"
        done
    } | tee "$DIR/defaults.txt"
    rm -f "$csv"
}

# Providers that fail slowly: the hang and the tail of the scenario's sweep, then every provider
# 15 s slower for the same ten minutes (a provider-wide slowdown); the table and plot compare
# availability, p50/p99 and upstream calls per request across the variants.
slow() {
    run slow
    local extra
    extra=$(mktemp)
    echo "== stall: streams whose first token never comes from the primary, 5:00 to 15:00"
    "$SIM" "$DIR/scenarios/slow.yaml" --csv "$extra" \
        --set 'sweep={path: providers.claude-a.faults.0.fault, values: ["stall_after_chunks=0"], labels: [stall]}' \
        --set 'clients.0.stream=true' | tee -a "$DIR/slow.txt"
    tail -n +2 "$extra" >> "$DIR/slow.csv"
    echo "== slowdown: every provider 15 s slower from 5:00 to 15:00"
    "$SIM" "$DIR/scenarios/slow.yaml" --csv "$extra" \
        --set 'sweep={path: providers.claude-a.faults.0.fault, values: ["delay_headers_ms=15000"], labels: [slowdown]}' \
        --set 'providers.gpt-a.faults=[{from_s: 300, to_s: 900, fault: "delay_headers_ms=15000"}]' |
        tee -a "$DIR/slow.txt"
    tail -n +2 "$extra" >> "$DIR/slow.csv"
    rm -f "$extra"
    {
        echo "# variant, then for hang, stall, tail, slowdown: answered (%)," \
             "upstream calls per request, p99 of the answered (s)"
        local columns="availability_pct upstream_per_request p99_ok_ms"
        # shellcheck disable=SC2086
        paste -d' ' <(pivot "$DIR/slow.csv" hang $columns) \
                    <(pivot "$DIR/slow.csv" stall $columns | cut -d' ' -f2-) \
                    <(pivot "$DIR/slow.csv" tail $columns | cut -d' ' -f2-) \
                    <(pivot "$DIR/slow.csv" slowdown $columns | cut -d' ' -f2-) |
            awk '{ printf "%s", $1
                   for (i = 2; i <= NF; i += 3) printf " %s %s %s", $i, $(i + 1), $(i + 2) / 1000
                   print "" }'
    } > "$DIR/slow.dat"
    gnuplot "$DIR/plots/slow.gp"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(backoff amplification outage throttling defaults slow)
for target in "${targets[@]}"; do
    case "$target" in
        backoff | amplification | outage | throttling | defaults | slow) "$target" ;;
        *) echo "usage: $0 [backoff|amplification|outage|throttling|defaults|slow]..." >&2
           exit 2 ;;
    esac
done
