#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14 with ASan + UBSan: the `fuzz` preset) and runs each for
# SECONDS (default 20; as many at once as there are cores), starting from its seed corpus in tests/fuzz/corpus/<name>/. New inputs go
# to a scratch directory, so the checked-in corpora only change on purpose. A crash stops the run
# with the input that caused it (crash-*, in the current directory).
#
#   scripts/fuzz.sh            # 20 s per target, what the test suite runs
#   scripts/fuzz.sh 3600       # an hour per target
#   TARGETS="chat_scan" scripts/fuzz.sh 600
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
targets="${TARGETS:-http_request chat_scan sse_parser translate rate_limit_headers config_loader kept_answers output_schema upstream_answer stream_relay}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# run TARGET: SECONDS of one core, its summary in $scratch/TARGET.log; fails on a finding.
run() {
    local target=$1
    mkdir -p "$scratch/$target"
    # -max_len 64 KiB: bodies and configs of realistic size; -timeout: a hang is a finding too.
    local status=0
    build/fuzz/tests/fuzz/"fuzz_$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "$scratch/$target" "tests/fuzz/corpus/$target" \
        > "$scratch/$target.out" 2>&1 || status=$?
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==.*ERROR|SUMMARY)|Done [0-9]+ runs" \
        "$scratch/$target.out" > "$scratch/$target.log" || true
    return "$status"
}

# Each target is single-threaded: as many run at once as there are cores, each with a core of its
# own for its SECONDS, as long as one target alone would get.
read -r -a queue <<< "$targets"
failed=()
while [ ${#queue[@]} -gt 0 ]; do
    batch=("${queue[@]:0:$(nproc)}")
    queue=("${queue[@]:${#batch[@]}}")
    pids=()
    for target in "${batch[@]}"; do
        run "$target" &
        pids+=($!)
    done
    for i in "${!batch[@]}"; do
        status=0
        wait "${pids[$i]}" || status=$?
        echo "== fuzz: ${batch[$i]} (${seconds} s)"
        cat "$scratch/${batch[$i]}.log" 2>/dev/null || true
        if [ "$status" -ne 0 ]; then
            failed+=("${batch[$i]}")
            tail -n 60 "$scratch/${batch[$i]}.out"
        fi
    done
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in ${failed[*]} (the inputs are crash-*, leak-* or timeout-* here)" >&2
    exit 1
fi
