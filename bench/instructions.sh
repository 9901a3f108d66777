#!/usr/bin/env bash
# User-space instructions per JSON request and per SSE stream (both shapes), nginx against
# Switchyard, counted by valgrind's callgrind: exact and repeatable where CPU time on a shared VM
# moves by ±20 % between runs, so a change's effect on the work done per request can be read off
# one run. Kernel time (syscalls, wakeups) is not in it — bench/targets.sh measures that.
#
#   bench/instructions.sh                   # JSON at 8 connections, then both stream shapes
#   CONNS=8 DURATION=4 bench/instructions.sh
#
# Both proxies run under callgrind (about 50x slower), so the figures are per request, never per
# second. Needs valgrind (scripts/setup.sh bench installs it).
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
source "$BENCH_DIR/common.sh"
RESULTS_DIR="${RESULTS_DIR:-$BENCH_DIR/results}"
CONNS="${CONNS:-8}"
DURATION="${DURATION:-4}"

setup_traps
command -v valgrind >/dev/null 2>&1 && command -v callgrind_control >/dev/null 2>&1 ||
    die "valgrind not found (scripts/setup.sh bench installs it)"
require_tools
acquire_lock
build_if_missing
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-instructions.XXXXXX")"
mkdir -p "$RESULTS_DIR"

start_mock
PROXY_WRAP="valgrind -q --tool=callgrind --callgrind-out-file=$WORK_DIR/callgrind-nginx"
start_nginx
PROXY_WRAP="valgrind -q --tool=callgrind --callgrind-out-file=$WORK_DIR/callgrind-switchyard"
start_switchyard
unset PROXY_WRAP
log "bench: mock :$MOCK_PORT, nginx :$NGINX_PORT (pid $NGINX_PID) and switchyard :$SWITCHYARD_PORT (pid $SWITCHYARD_PID) under callgrind"

# measure TARGET PORT PID STREAM: user-space instructions per request over a wrk run, counted from
# a zeroed counter to a dump. Prints "requests instructions".
measure() {
    local target="$1" port="$2" pid="$3" stream="$4" out="$WORK_DIR/wrk-$1"
    local url="http://127.0.0.1:$port/v1/chat/completions"
    # Warm-up: connections, pools and caches as under load, not counted.
    BENCH_STREAM="$stream" wrk -t1 -c"$CONNS" -d1s -s "$BENCH_DIR/post.lua" "$url" >/dev/null 2>&1 ||
        die "warm-up through $target failed"
    local before
    before="$(find "$WORK_DIR" -maxdepth 1 -name "callgrind-$target.[0-9]*" | wc -l)"
    callgrind_control -z "$pid" >/dev/null 2>&1 || die "callgrind_control could not zero $target"
    BENCH_STREAM="$stream" wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$BENCH_DIR/post.lua" "$url" \
        >"$out" 2>&1 || die "wrk through $target failed: $(cat "$out")"
    callgrind_control -d "$pid" >/dev/null 2>&1 || die "callgrind_control could not dump $target"
    local dump="$WORK_DIR/callgrind-$target.$((before + 1))"
    for _ in $(seq 50); do [ -s "$dump" ] && grep -q '^totals:' "$dump" && break; sleep 0.1; done
    grep -q '^summary:' "$dump" || die "no callgrind dump from $target ($dump)"
    grep -q 'Non-2xx\|Socket errors' "$out" && die "errors through $target: $(cat "$out")"
    local requests instructions
    requests="$(grep -Eo '[0-9]+ requests in' "$out" | cut -d' ' -f1)"
    instructions="$(awk '/^summary:/ { print $2 }' "$dump")"
    [ "${requests:-0}" -gt 0 ] || die "no requests completed through $target"
    echo "$requests $instructions"
}

report() {
    local what="$1" unit="$2" n_req n_ins s_req s_ins
    read -r n_req n_ins <<<"$3"
    read -r s_req s_ins <<<"$4"
    awk -v what="$what" -v unit="$unit" -v nr="$n_req" -v ni="$n_ins" -v sr="$s_req" -v si="$s_ins" \
        'BEGIN { n = ni / nr; s = si / sr;
                 printf "%-44s nginx %8.0f   switchyard %8.0f   ratio %5.2fx   (%d / %d %s)\n",
                        what " per " unit, n, s, s / n, nr, sr, unit "s" }'
}

echo "user-space instructions (callgrind), $CONNS connections, ${DURATION}s per figure; switchyard $(git -C "$ROOT" log -1 --format=%h 2>/dev/null || echo '?')"
report "JSON request" request "$(measure nginx "$NGINX_PORT" "$NGINX_PID" "")" \
    "$(measure switchyard "$SWITCHYARD_PORT" "$SWITCHYARD_PID" "")"
report "SSE stream, events one by one" stream "$(measure nginx "$NGINX_PORT" "$NGINX_PID" 1)" \
    "$(measure switchyard "$SWITCHYARD_PORT" "$SWITCHYARD_PID" 1)"
curl -sf -X POST "http://127.0.0.1:$MOCK_PORT/mock/scenario" \
    -d '{"rules":[{"fault":"one_write=1"}]}' >/dev/null || die "the mock refused one_write"
report "SSE stream, whole stream in one write" stream \
    "$(measure nginx "$NGINX_PORT" "$NGINX_PID" 1)" \
    "$(measure switchyard "$SWITCHYARD_PORT" "$SWITCHYARD_PID" 1)"
