#!/usr/bin/env bash
# Open-loop latency benchmark: requests at a fixed rate (RATE per second over CONNS keep-alive
# connections, latency from each request's scheduled time) sent directly to the mock, through
# nginx and through Switchyard, interleaved, REPS times. Below saturation this measures what a hop
# adds; a closed-loop generator (wrk, bench/run.sh) measures queueing once a proxy saturates.
# Prints added p50/p99 over direct and CPU per request, with ratios against nginx.
#   bench/openloop.sh                       # RATE=8000 CONNS=64 DURATION=5 REPS=3
set -euo pipefail
source "$(dirname "$0")/common.sh"

RATE="${RATE:-8000}"
CONNS="${CONNS:-64}"
DURATION="${DURATION:-5}"
REPS="${REPS:-3}"
TARGETS="direct nginx switchyard"

setup_traps
require_tools
acquire_lock
build_if_missing
build_openloop_if_missing
taskset -pc "$LOAD_CPU" $$ >/dev/null
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
start_mock
start_nginx
start_switchyard
BODY="$(write_open_loop_body)"

port_of() {
    case "$1" in
        direct) echo "$MOCK_PORT" ;;
        nginx) echo "$NGINX_PORT" ;;
        switchyard) echo "$SWITCHYARD_PORT" ;;
    esac
}
pid_of() {
    case "$1" in
        direct) echo "$MOCK_PID" ;;
        nginx) echo "$NGINX_WORKER_PID" ;;
        switchyard) echo "$SWITCHYARD_PID" ;;
    esac
}

RESULTS="$WORK_DIR/results.txt"
: >"$RESULTS"
log "bench: open loop, $RATE req/s over $CONNS connections, ${DURATION}s per target, $REPS reps"
for t in $TARGETS; do  # warm-up
    taskset -c "$LOAD_CPU" "$OPENLOOP" 127.0.0.1 "$(port_of "$t")" /v1/chat/completions "$BODY" \
        "$RATE" 1 "$CONNS" >/dev/null || die "$t failed during the warm-up"
done
for rep in $(seq "$REPS"); do
    for t in $TARGETS; do
        wait_until_quiet "$t rep $rep" || true
        check_alive
        pid="$(pid_of "$t")"
        before="$(cpu_ticks "$pid")"
        line="$(taskset -c "$LOAD_CPU" "$OPENLOOP" 127.0.0.1 "$(port_of "$t")" /v1/chat/completions \
            "$BODY" "$RATE" "$DURATION" "$CONNS")" || die "$t: $line"
        after="$(cpu_ticks "$pid")"
        done_n="$(sed -n 's/.* done=\([0-9]*\).*/\1/p' <<<"$line")"
        cpu_us="$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$done_n" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')"
        log "bench: rep $rep $t: $line cpu_us_per_req=$cpu_us"
        echo "$rep $t $(sed -n 's/.*p50_us=\([0-9-]*\) p90_us=[0-9-]* p99_us=\([0-9-]*\).*/\1 \2/p' <<<"$line") $cpu_us" >>"$RESULTS"
    done
done

awk -v rate="$RATE" -v conns="$CONNS" '
    function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { p50[$1, $2] = $3; p99[$1, $2] = $4; cpu[$1, $2] = $5; reps[$1] = 1 }
    END {
        n = 0; for (r in reps) n++
        for (r = 1; r <= n; r++) {
            a50n[r] = p50[r, "nginx"] - p50[r, "direct"]; a50s[r] = p50[r, "switchyard"] - p50[r, "direct"]
            a99n[r] = p99[r, "nginx"] - p99[r, "direct"]; a99s[r] = p99[r, "switchyard"] - p99[r, "direct"]
            cn[r] = cpu[r, "nginx"]; cs[r] = cpu[r, "switchyard"]
        }
        printf "open loop, %d req/s over %d connections; medians of %d reps\n", rate, conns, n
        printf "%-12s %14s %14s %16s\n", "", "added p50 us", "added p99 us", "CPU-us/req"
        printf "%-12s %14.0f %14.0f %16.2f\n", "nginx", median(a50n, n), median(a99n, n), median(cn, n)
        printf "%-12s %14.0f %14.0f %16.2f\n", "switchyard", median(a50s, n), median(a99s, n), median(cs, n)
        m50n = median(a50n, n); m50s = median(a50s, n); mcn = median(cn, n); mcs = median(cs, n)
        printf "switchyard / nginx: added p50 %.2fx, CPU-us/req %.2fx\n", m50s / m50n, mcs / mcn
    }' "$RESULTS"
