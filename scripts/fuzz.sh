#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14 with ASan + UBSan: the `fuzz` preset) and runs each for
# SECONDS (default 20), starting from its seed corpus in tests/fuzz/corpus/<name>/. New inputs go
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
for target in $targets; do
    mkdir -p "$scratch/$target"
    echo "== fuzz: $target (${seconds} s)"
    # -max_len 64 KiB: bodies and configs of realistic size; -timeout: a hang is a finding too.
    build/fuzz/tests/fuzz/"fuzz_$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "$scratch/$target" "tests/fuzz/corpus/$target" \
        2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==.*ERROR|SUMMARY)|Done [0-9]+ runs"
done
