#!/usr/bin/env bash
# Benchmark: the mock provider directly vs nginx proxy_pass vs Switchyard, in one run, with the
# protocol of bench/README.md#protocol; that file also describes usage, knobs and output.
#
#   bench/run.sh                     # requests; REPS=3 DURATION=5 CONNS="1 64" WARMUP=2
#   MODE=stream bench/run.sh         # SSE streams (what bench/stream.sh runs)
#   PROFILE=1 bench/run.sh           # plus perf profiles and syscall counts of the proxies
set -euo pipefail
source "$(dirname "$0")/common.sh"

MODE="${MODE:-requests}"
REPS="${REPS:-3}"
DURATION="${DURATION:-5}"
CONNS="${CONNS:-1 64}"
WARMUP="${WARMUP:-2}"
# A rep in which something else used more than OTHER_MAX % of a CPU is repeated, up to RETRIES times.
OTHER_MAX="${OTHER_MAX:-10}"
RETRIES="${RETRIES:-3}"
RESULTS_DIR="${RESULTS_DIR:-$BENCH_DIR/results}"
case "$MODE" in
    requests) TARGETS="${TARGETS:-direct nginx switchyard switchyard-rewrite}" ;;
    stream) TARGETS="${TARGETS:-direct nginx switchyard}" ;;
    *) echo "run.sh: MODE must be requests or stream" >&2; exit 2 ;;
esac
# Stream mode: sequential requests per target and rep for the time-to-first-byte figure.
TTFB_SAMPLES="${TTFB_SAMPLES:-200}"

usage_error() { echo "run.sh: $*" >&2; exit 2; }
for v in REPS DURATION WARMUP TTFB_SAMPLES; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || usage_error "$v must be a positive integer"
done
[[ "$RETRIES" =~ ^[0-9]+$ ]] || usage_error "RETRIES must be an integer >= 0"
[[ "$OTHER_MAX" =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "OTHER_MAX must be a number"
[[ "$QUIET_MAX" =~ ^[0-9]+$ ]] || usage_error "QUIET_MAX must be an integer"
for c in $CONNS; do [[ "$c" =~ ^[1-9][0-9]*$ ]] || usage_error "CONNS must be positive integers"; done
for t in $TARGETS; do
    case "$t" in direct | nginx | switchyard | switchyard-rewrite) ;; *) usage_error "unknown target $t" ;; esac
done
[[ " $TARGETS " == *" direct "* ]] || usage_error "TARGETS must include direct (added latency is relative to it)"

setup_traps
require_tools
acquire_lock
build_if_missing
# This script and everything it forks (samplers, awk, curl) stay off the proxies' CPU.
taskset -pc "$LOAD_CPU" $$ >/dev/null
mkdir -p "$RESULTS_DIR"
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
STAMP="$(date +%Y%m%d-%H%M%S)"
[ "$MODE" = requests ] && PREFIX="$RESULTS_DIR/run-$STAMP" || PREFIX="$RESULTS_DIR/stream-$STAMP"
CSV="$PREFIX.csv"
REPORT="$PREFIX.txt"

start_mock
# Stream shape (MODE=stream): `events` — the mock writes each SSE event on its own (the default);
# `one_write` — the whole stream in one write, as a provider whose events arrive in one packet.
SHAPE="${SHAPE:-events}"
case "$SHAPE" in
    events) ;;
    one_write)
        curl -sf -X POST "http://127.0.0.1:$MOCK_PORT/mock/scenario" \
            -d '{"rules":[{"fault":"one_write=1"}]}' >/dev/null || die "the mock refused one_write"
        ;;
    *) die "SHAPE must be events or one_write" ;;
esac
start_nginx
start_switchyard

target_url() {
    case "$1" in
        direct) echo "http://127.0.0.1:$MOCK_PORT/v1/chat/completions" ;;
        nginx) echo "http://127.0.0.1:$NGINX_PORT/v1/chat/completions" ;;
        switchyard | switchyard-rewrite) echo "http://127.0.0.1:$SWITCHYARD_PORT/v1/chat/completions" ;;
    esac
}
target_model() { if [ "$1" = switchyard-rewrite ]; then echo bench-rewrite; else echo bench; fi; }
# The process whose CPU and RSS are the figure; the mock for the direct case.
target_pid() {
    case "$1" in
        direct) echo "$MOCK_PID" ;;
        nginx) echo "$NGINX_WORKER_PID" ;;
        switchyard | switchyard-rewrite) echo "$SWITCHYARD_PID" ;;
    esac
}

for t in $TARGETS; do smoke_check "$t" "$(target_url "$t")" "$(target_model "$t")"; done
EXPECTED_FRAMES=0
if [ "$MODE" = stream ]; then
    # SSE events per stream, counted on the mock directly; every target must deliver them all.
    EXPECTED_FRAMES="$(curl -sN -m 5 "$(target_url direct)" -H 'Content-Type: application/json' \
        -d '{"model":"bench","stream":true,"messages":[{"role":"user","content":"hi"}]}' | grep -c '^data: ' || true)"
    [ "$EXPECTED_FRAMES" -gt 0 ] || die "the mock sent no SSE events"
fi

wait_until_quiet "the idle check" || true
read -r IDLE_CPU0 IDLE_CPU1 <<<"$(idle_check)"
RSS_IDLE_SWITCHYARD="$(rss_kb "$SWITCHYARD_PID")"
RSS_IDLE_NGINX="$(rss_kb "$NGINX_WORKER_PID")"

echo "rep,conns,target,duration_s,requests,rps,mean_us,p50_us,p90_us,p99_us,p999_us,max_us,non2xx,socket_errors,proxy_pid,proxy_cpu_ticks,proxy_cpu_us_per_req,proxy_cpu_pct,mock_cpu_us_per_req,wrk_cpu_us_per_req,rss_before_kb,rss_peak_kb,rss_after_kb,cpu0_busy_pct,cpu1_busy_pct,cpu1_other_pct,other_cpu_pct,steal_ticks,compile_seen,disturbed,attempt,frames,frames_expected,frames_lost,done_markers,proxy_cpu_us_per_frame" >"$CSV"

field() { awk -v k="$1" '/^BENCH / { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$2"; }

# measure_run REP CONNS TARGET SECONDS [ATTEMPT]: one wrk run. For a numeric REP it leaves the
# CSV row in $ROW and sets DISTURBED=1 when something else used the CPUs meanwhile (a build
# seen, or more than OTHER_MAX % of a CPU not accounted for by proxy + mock + wrk).
# RUN_HOOK, if set, names a function started in the background (with the target pid) before
# wrk and stopped with SIGINT after it: a profiler covering exactly the wrk run.
measure_run() {
    local rep="$1" conns="$2" target="$3" secs="$4" attempt="${5:-1}"
    local url model pid out busy=0 stream=0
    url="$(target_url "$target")"
    model="$(target_model "$target")"
    pid="$(target_pid "$target")"
    [ "$MODE" = stream ] && stream=1
    out="$WORK_DIR/wrk-$rep-$conns-$target.txt"
    wait_until_quiet "$target c=$conns rep $rep" || busy=1
    check_alive

    local stop="$WORK_DIR/stop.$$" peakf="$WORK_DIR/peak.$$"
    rm -f "$stop" "$peakf"
    local t0 t1 m0 m1 w0 w1 c1a c1b c0a c0b rss0 rss1
    rss0="$(rss_kb "$pid")"
    rss_sampler "$pid" "$peakf" "$stop" &
    SAMPLER_PID=$!
    local hook_pid=""
    if [ -n "${RUN_HOOK:-}" ]; then
        "$RUN_HOOK" "$pid" &
        hook_pid=$!
        STARTED_PIDS+=("$hook_pid")
        sleep 1   # let it attach
    fi
    t0="$(cpu_ticks "$pid")"; m0="$(cpu_ticks "$MOCK_PID")"; w0="$(child_ticks)"
    c1a="$(cpu_line "$PROXY_CPU")"; c0a="$(cpu_line "$LOAD_CPU")"

    local rc=0
    BENCH_MODEL="$model" BENCH_STREAM="$stream" taskset -c "$LOAD_CPU" \
        wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$BENCH_DIR/post.lua" "$url" >"$out" 2>&1 || rc=$?
    check_alive

    c1b="$(cpu_line "$PROXY_CPU")"; c0b="$(cpu_line "$LOAD_CPU")"
    t1="$(cpu_ticks "$pid")"; m1="$(cpu_ticks "$MOCK_PID")"; w1="$(child_ticks)"
    touch "$stop"; wait "$SAMPLER_PID" || true; SAMPLER_PID=
    if [ -n "$hook_pid" ]; then
        kill -INT "$hook_pid" 2>/dev/null || true
        wait "$hook_pid" || true
        forget_pid "$hook_pid"
    fi
    rss1="$(rss_kb "$pid")"
    local peak; peak="$(cat "$peakf" 2>/dev/null || echo 0)"
    [ "${peak:-0}" -ge "$rss1" ] || peak="$rss1"
    if compile_running; then busy=1; fi

    [ "$rc" -eq 0 ] || { cat "$out" >&2; die "wrk exited with $rc ($target, c=$conns)"; }
    grep -q '^BENCH ' "$out" || { cat "$out" >&2; die "no result line from wrk ($target, c=$conns)"; }
    local requests duration_us non2xx sockerr
    requests="$(field requests "$out")"
    duration_us="$(field duration_us "$out")"
    non2xx="$(field status "$out")"
    sockerr=$(($(field connect "$out") + $(field read "$out") + $(field write "$out") + $(field timeout "$out")))
    if [ "$non2xx" -ne 0 ] || grep -q 'Non-2xx or 3xx responses' "$out"; then
        cat "$out" >&2; die "$non2xx non-2xx responses ($target, c=$conns)"
    fi
    [ "$sockerr" -eq 0 ] || { cat "$out" >&2; die "$sockerr socket errors ($target, c=$conns)"; }
    [ "$requests" -gt 0 ] || { cat "$out" >&2; die "no requests completed ($target, c=$conns)"; }
    LAST_REQUESTS="$requests"
    [[ "$rep" =~ ^[0-9]+$ ]] || return 0   # warm-up and profiling runs are not figures

    local proxy_pid proxy_ticks
    if [ "$target" = direct ]; then proxy_pid=""; proxy_ticks=""; else proxy_pid="$pid"; proxy_ticks=$((t1 - t0)); fi
    ROW="$(awk -v rep="$rep" -v conns="$conns" -v target="$target" -v dus="$duration_us" \
        -v req="$requests" -v pt="$proxy_ticks" -v ppid="$proxy_pid" -v mt=$((m1 - m0)) -v wt=$((w1 - w0)) \
        -v tck="$CLK_TCK" -v c1a="$c1a" -v c1b="$c1b" -v c0a="$c0a" -v c0b="$c0b" -v rss0="$rss0" \
        -v peak="$peak" -v rss1="$rss1" -v busy="$busy" -v other_max="$OTHER_MAX" -v attempt="$attempt" \
        -v mean="$(field mean_us "$out")" -v p50="$(field p50_us "$out")" \
        -v p90="$(field p90_us "$out")" -v p99="$(field p99_us "$out")" \
        -v p999="$(field p999_us "$out")" -v max="$(field max_us "$out")" -v sockerr="$sockerr" \
        -v stream="$stream" -v frames="$(field frames "$out")" -v dm="$(field done_markers "$out")" \
        -v per="$EXPECTED_FRAMES" 'BEGIN {
        split(c1a, a); split(c1b, b); split(c0a, x); split(c0b, y)
        busy1 = b[1] - a[1]; busy0 = y[1] - x[1]
        wall1 = busy1 + (b[2] - a[2]); wall0 = busy0 + (y[2] - x[2])    # ticks, busy + idle
        ptk = (pt == "") ? 0 : pt
        cpu1_pct = wall1 > 0 ? busy1 / wall1 * 100 : 0
        cpu0_pct = wall0 > 0 ? busy0 / wall0 * 100 : 0
        # CPU time nothing of ours accounts for, in % of one CPU (includes kernel work charged to
        # no process, e.g. some softirq, and this script itself).
        other1 = wall1 > 0 ? (busy1 - ptk) / wall1 * 100 : 0
        other = wall1 > 0 ? (busy0 + busy1 - ptk - mt - wt) / wall1 * 100 : 0
        if (other1 < 0) other1 = 0
        if (other < 0) other = 0
        disturbed = (busy || other > other_max) ? 1 : 0
        pus = (pt == "") ? "" : sprintf("%.2f", pt * 1e6 / tck / req)
        ppct = (pt == "") ? "" : sprintf("%.1f", pt / tck / (dus / 1e6) * 100)
        if (stream) {
            expected = req * per; lost = expected - frames
            pfr = (pt == "" || frames == 0) ? "" : sprintf("%.2f", pt * 1e6 / tck / frames)
        } else { frames = ""; expected = ""; lost = ""; dm = ""; pfr = "" }
        printf "%s,%s,%s,%.3f,%d,%.1f,%s,%s,%s,%s,%s,%s,0,%d,%s,%s,%s,%s,%.2f,%.2f,%d,%d,%d,%.0f,%.0f,%.1f,%.1f,%d,%d,%d,%d,%s,%s,%s,%s,%s\n",
            rep, conns, target, dus / 1e6, req, req / (dus / 1e6), mean, p50, p90, p99, p999, max,
            sockerr, ppid, pt, pus, ppct, mt * 1e6 / tck / req, wt * 1e6 / tck / req,
            rss0, peak, rss1, cpu0_pct, cpu1_pct, other1, other, b[3] - a[3], busy, disturbed, attempt,
            frames, expected, lost, dm, pfr
    }')"
    DISTURBED="$(awk -F, '{print $30}' <<<"$ROW")"
    log "bench: c=$conns rep $rep $(printf '%-19s' "$target") $(awk -F, '{printf "%8.0f %s  p50 %5d us  p99 %6d us  cpu/req %6s us  mock %5.1f  other %4.1f%%%s%s", $6, ($33 == "" ? "rps" : "streams/s"), $8, $10, ($17 == "" ? "-" : $17), $19, $27, ($33 == "" ? "" : "  frames lost " $34), ($30 ? "  DISTURBED" : "")}' <<<"$ROW")"
}

# Stream mode: p50 time to first byte of TTFB_SAMPLES sequential requests on one connection.
ttfb_p50() {
    local url="$1" args=() i
    for i in $(seq "$TTFB_SAMPLES"); do args+=(-o /dev/null --url "$url"); done
    curl -s -m 60 -H 'Content-Type: application/json' \
        -d '{"model":"bench","stream":true,"messages":[{"role":"user","content":"hi"}]}' \
        -w '%{http_code} %{time_starttransfer}\n' "${args[@]}" >"$WORK_DIR/ttfb.txt" ||
        die "curl failed measuring time to first byte on $url"
    awk '$1 != 200 { bad++ } { v[NR] = $2 * 1e6 } END {
        if (bad) { print "non-200"; exit }
        for (i = 2; i <= NR; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$WORK_DIR/ttfb.txt"
}

log "bench: $MODE mode; mock :$MOCK_PORT (CPU $LOAD_CPU), nginx :$NGINX_PORT worker $NGINX_WORKER_PID and switchyard :$SWITCHYARD_PORT pid $SWITCHYARD_PID (CPU $PROXY_CPU); wrk on CPU $LOAD_CPU"
log "bench: $REPS reps x ${DURATION}s per target, connections: $CONNS; raw numbers: $CSV"
REDONE=0
for c in $CONNS; do
    for t in $TARGETS; do measure_run warmup "$c" "$t" "$WARMUP"; done
    for r in $(seq "$REPS"); do
        # A rep is the targets back to back; one disturbed run repeats the whole rep, so the
        # targets of a rep always saw the same conditions.
        for attempt in $(seq $((RETRIES + 1))); do
            rows=""; bad=0
            for t in $TARGETS; do
                measure_run "$r" "$c" "$t" "$DURATION" "$attempt"
                rows+="$ROW"$'\n'
                [ "$DISTURBED" = 0 ] || bad=1
            done
            if [ "$bad" = 0 ] || [ "$attempt" -gt "$RETRIES" ]; then break; fi
            REDONE=$((REDONE + 1))
            log "bench: c=$c rep $r was disturbed; repeating it"
            sleep 2
        done
        printf '%s' "$rows" >>"$CSV"
    done
done

TTFB_FILE=""
if [ "$MODE" = stream ]; then
    # Time to first byte: one connection, requests one after another, after the wrk runs.
    TTFB_FILE="$WORK_DIR/ttfb.summary"
    : >"$TTFB_FILE"
    declare -A TTFB_VALUES=()
    for r in $(seq "$REPS"); do
        for t in $TARGETS; do
            wait_until_quiet "time to first byte, $t" || true
            v="$(ttfb_p50 "$(target_url "$t")")"
            [ "$v" != non-200 ] || die "non-200 answer measuring time to first byte on $t"
            TTFB_VALUES[$t]+="$v "
            log "bench: ttfb rep $r $(printf '%-19s' "$t") p50 $v us"
        done
    done
    for t in $TARGETS; do
        echo "$t $(tr ' ' '\n' <<<"${TTFB_VALUES[$t]}" | awk 'NF' | sort -n |
            awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')" >>"$TTFB_FILE"
    done
fi

# Optional: where the proxies' CPU goes, from extra runs that are not part of the figures:
# a flat cpu-clock profile (perf record; no hardware counters needed on a VM) and exact syscall
# counts (perf stat on the syscall tracepoints) of the nginx worker and of Switchyard.
PROFILE_REPORT=""
perf_record_hook() {
    exec taskset -c "$LOAD_CPU" perf record -q -e cpu-clock -F 1999 -o "$PERF_DATA" -p "$1" \
        >"$PERF_LOG" 2>&1
}
perf_syscalls_hook() {
    exec taskset -c "$LOAD_CPU" perf stat -x, -e 'syscalls:sys_enter_*' -o "$PERF_SYSCALLS" -p "$1" \
        >"$PERF_LOG" 2>&1
}
profile_target() {
    local t="$1" c="$2" unit
    [ "$MODE" = stream ] && unit=streams || unit=requests
    PERF_DATA="$PREFIX-perf-$t-c$c.data"
    PERF_LOG="$WORK_DIR/perf-$t.log"
    PERF_SYSCALLS="$PREFIX-syscalls-$t-c$c.perfstat"
    RUN_HOOK=perf_record_hook measure_run profile "$c" "$t" "$DURATION"
    [ -s "$PERF_DATA" ] || die "perf record wrote nothing: $(cat "$PERF_LOG")"
    local rec_requests="$LAST_REQUESTS"
    RUN_HOOK=perf_syscalls_hook measure_run profile "$c" "$t" "$DURATION"
    grep -q 'syscalls:sys_enter_' "$PERF_SYSCALLS" || die "perf stat wrote nothing: $(cat "$PERF_LOG")"
    {
        echo "-- $t, c=$c: CPU by binary (perf record -e cpu-clock over a ${DURATION}s run, $rec_requests $unit)"
        perf report -i "$PERF_DATA" --stdio --no-children --sort dso --percent-limit 1 2>/dev/null |
            awk '!/^#/ && NF' | head -12
        echo "-- $t, c=$c: top symbols"
        perf report -i "$PERF_DATA" --stdio --no-children --sort dso,sym --percent-limit 0.7 2>/dev/null |
            awk '!/^#/ && NF' | cut -c1-160 | head -45
        echo "-- $t, c=$c: syscalls per ${unit%s} (perf stat on syscalls:sys_enter_* over another ${DURATION}s run, $LAST_REQUESTS $unit)"
        awk -F, -v req="$LAST_REQUESTS" '
            $3 ~ /^syscalls:sys_enter_/ && $1 ~ /^[0-9]+$/ { n = $3; sub(/^syscalls:sys_enter_/, "", n); calls[n] += $1; all += $1 }
            END { printf "   %-18s %6.2f\n", "(all)", all / req
                  for (k in calls) if (calls[k] / req >= 0.01) printf "   %-18s %6.2f\n", k, calls[k] / req }' \
            "$PERF_SYSCALLS" | sort -k2 -nr
        echo
    } >>"$PROFILE_REPORT"
}
if [ "${PROFILE:-0}" = 1 ]; then
    command -v perf >/dev/null 2>&1 || die "PROFILE=1 needs perf (linux-perf)"
    PROFILE_REPORT="$PREFIX-profile.txt"
    : >"$PROFILE_REPORT"
    for pc in ${PROFILE_CONNS:-$CONNS}; do
        for t in nginx switchyard; do
            if [[ " $TARGETS " == *" $t "* ]]; then profile_target "$t" "$pc"; fi
        done
    done
fi

sleep 1
RSS_AFTER_SWITCHYARD="$(rss_kb "$SWITCHYARD_PID")"
RSS_AFTER_NGINX="$(rss_kb "$NGINX_WORKER_PID")"

# ---------------------------------------------------------------------------------------------
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
{
    if [ "$MODE" = stream ]; then
        echo "== Switchyard SSE stream benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    else
        echo "== Switchyard request benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    fi
    machine_facts
    echo "setup: mock (1 thread) + wrk -t1 on CPU $LOAD_CPU; nginx (1 worker, upstream keepalive 64, proxy_buffering off, access log: $NGINX_ACCESS_LOG) and switchyard (--workers 1, access log on -> /dev/null) on CPU $PROXY_CPU"
    echo "runs: $REPS reps x ${DURATION}s per target per connection count, targets interleaved, ${WARMUP}s warm-up each; request body $(field body_bytes "$(ls "$WORK_DIR"/wrk-1-* | head -1)") bytes$([ "$MODE" = stream ] && echo "; $EXPECTED_FRAMES SSE events per stream, shape $SHAPE")"
    echo "idle before load: CPU0 ${IDLE_CPU0}% busy, CPU1 ${IDLE_CPU1}% busy"
    echo "waits for a quiet machine before runs: $WAITS, ${WAITED_SECS}s in all"
    if [ "${#BUSY_NOTES[@]}" -gt 0 ]; then
        for n in "${BUSY_NOTES[@]}"; do echo "busy: $n"; done
    fi
    awk -F, -v redone="$REDONE" 'NR > 1 { if ($26 > m1) m1 = $26; if ($27 > m) m = $27; st += $28; if ($29 == 1) b++; if ($30 == 1) d++ }
        END { printf "other activity during runs: max %.1f%% of a CPU not used by proxy/mock/wrk (max %.1f%% on CPU 1); steal %d ticks\n", m, m1, st
              printf "disturbed reps repeated: %d; runs kept although disturbed: %d; runs with a build seen: %d\n", redone, d, b }' "$CSV"
    echo
    awk -v mode="$MODE" -v reps="$REPS" -v conns_list="$CONNS" -v targets="$TARGETS" \
        -v cpu="$PROXY_CPU" -v ttfb="$TTFB_FILE" -f "$BENCH_DIR/report.awk" "$CSV"
    echo
    printf 'RSS MiB (idle before / peak under load / after): switchyard %s / %s / %s; nginx worker %s / %s / %s\n' \
        "$(mib "$RSS_IDLE_SWITCHYARD")" \
        "$(mib "$(awk -F, '$3 ~ /^switchyard/ && $22 > m {m = $22} END {print m + 0}' "$CSV")")" \
        "$(mib "$RSS_AFTER_SWITCHYARD")" "$(mib "$RSS_IDLE_NGINX")" \
        "$(mib "$(awk -F, '$3 == "nginx" && $22 > m {m = $22} END {print m + 0}' "$CSV")")" \
        "$(mib "$RSS_AFTER_NGINX")"
    if [ "$MODE" = stream ]; then
        echo "notes: CPU-us/frame = utime+stime delta of the proxy process (all threads) / SSE events delivered;"
        echo "       frames/CPU-ms is its inverse. p50 is the time to the whole stream (the mock sends events back to back)."
    else
        echo "notes: CPU-us/req = utime+stime delta of the proxy process (all threads) / requests completed; for direct"
        echo "       only the mock's is shown (mock CPU-us/req). added p50 = target p50 - direct p50 of the same rep."
    fi
    echo "       wrk is closed-loop: at many connections latency reflects queueing at the bottleneck, not the hop."
    echo "raw: $CSV"
    if [ -n "$PROFILE_REPORT" ]; then
        echo
        echo "== Profile (extra runs, not part of the figures above; perf data: $PREFIX-perf-*.data)"
        cat "$PROFILE_REPORT"
    fi
} | tee "$REPORT"

if [ "$MODE" = stream ]; then
    lost="$(awk -F, 'NR > 1 && $34 != "" { s += $34 } END { print s + 0 }' "$CSV")"
    [ "$lost" -eq 0 ] || die "$lost SSE frames lost (must be 0); see $CSV"
fi
