#!/usr/bin/env bash
# What tracing costs: the same request through Switchyard with tracing off, on but unsampled
# (sample_ratio 0: the decision and nothing else), and on and sampled (every request: a server
# span and a client span, batched to an OTLP collector), next to direct and nginx, in one run.
# Open loop (RATE per second over CONNS keep-alive connections), interleaved, REPS times. The
# collector is a small Node.js sink that answers every export 200 (its CPU is printed apart).
# Prints added p50/p99 over direct and the gateway's CPU per request, with the ratios.
#   bench/tracing.sh                          # RATE=2000 CONNS=32 DURATION=5 REPS=3
set -euo pipefail
source "$(dirname "$0")/common.sh"

RATE="${RATE:-2000}"
CONNS="${CONNS:-32}"
DURATION="${DURATION:-5}"
REPS="${REPS:-3}"
TARGETS="direct nginx off unsampled sampled"

setup_traps
require_tools
command -v node >/dev/null || die "node is missing (scripts/setup.sh bench installs it)"
acquire_lock
build_if_missing
build_openloop_if_missing
taskset -pc "$LOAD_CPU" $$ >/dev/null
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
start_mock
start_nginx

# The collector: counts the spans it is sent.
cat >"$WORK_DIR/collector.mjs" <<'JS'
import http from 'node:http';
let spans = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(String(spans)); return; }
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    for (const r of JSON.parse(body).resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`collector listening on 127.0.0.1:${server.address().port}`));
JS
taskset -c "$LOAD_CPU" node "$WORK_DIR/collector.mjs" >"$WORK_DIR/collector.out" 2>&1 9>&- &
COLLECTOR_PID=$!
STARTED_PIDS+=("$COLLECTOR_PID")
line="$(wait_for_line "$WORK_DIR/collector.out" 'listening on 127\.0\.0\.1:[0-9]+' "$COLLECTOR_PID" collector)"
COLLECTOR_PORT="${line##*:}"

start_gateway() {
    local name="$1" telemetry="$2"
    cat >"$WORK_DIR/$name.yaml" <<EOF2
server: {workers: 1}
log: {access: stdout}
$telemetry
models:
  - name: bench
    deployments:
      - {provider: openai, model: bench, api_base: "http://127.0.0.1:$MOCK_PORT/v1"}
EOF2
    taskset -c "$PROXY_CPU" "$SWITCHYARD" serve --config "$WORK_DIR/$name.yaml" \
        --listen 127.0.0.1:0 --workers 1 >/dev/null 2>"$WORK_DIR/$name.err" 9>&- &
    local pid=$!
    STARTED_PIDS+=("$pid")
    local line
    line="$(wait_for_line "$WORK_DIR/$name.err" 'listening on 127\.0\.0\.1:[0-9]+' "$pid" "$name")"
    eval "GW_${name^^}_PID=$pid; GW_${name^^}_PORT=${line##*:}"
}
COLLECTOR_URL="http://127.0.0.1:$COLLECTOR_PORT"
start_gateway off ""
start_gateway unsampled "telemetry: {otlp_endpoint: \"$COLLECTOR_URL\", sample_ratio: 0}"
start_gateway sampled "telemetry: {otlp_endpoint: \"$COLLECTOR_URL\", sample_ratio: 1}"

BODY="$(write_open_loop_body)"
port_of() {
    case "$1" in
        direct) echo "$MOCK_PORT" ;;
        nginx) echo "$NGINX_PORT" ;;
        off) echo "$GW_OFF_PORT" ;;
        unsampled) echo "$GW_UNSAMPLED_PORT" ;;
        sampled) echo "$GW_SAMPLED_PORT" ;;
    esac
}
pid_of() {
    case "$1" in
        direct) echo "$MOCK_PID" ;;
        nginx) echo "$NGINX_WORKER_PID" ;;
        off) echo "$GW_OFF_PID" ;;
        unsampled) echo "$GW_UNSAMPLED_PID" ;;
        sampled) echo "$GW_SAMPLED_PID" ;;
    esac
}
header_of() { echo ""; }
alive() {
    for pid in "$MOCK_PID" "$NGINX_WORKER_PID" "$GW_OFF_PID" "$GW_UNSAMPLED_PID" \
        "$GW_SAMPLED_PID" "$COLLECTOR_PID"; do
        kill -0 "$pid" 2>/dev/null || die "a server (pid $pid) exited during the benchmark"
    done
}

RESULTS="$WORK_DIR/results.txt"
: >"$RESULTS"
log "bench: tracing, open loop, $RATE req/s over $CONNS connections, ${DURATION}s per target, $REPS reps"
SIDE_PID="$COLLECTOR_PID"
run_open_loop_reps
sleep 2  # the last batch
metric() {
    curl -s "http://127.0.0.1:$GW_SAMPLED_PORT/metrics" | awk -v m="$1" 'index($1, m) == 1 {s += $2} END {print s + 0}'
}
exported="$(metric switchyard_trace_spans_exported_total)"
dropped="$(metric switchyard_trace_spans_dropped_total)"
received="$(curl -s "$COLLECTOR_URL/")"
print_open_loop_table "tracing, open loop, $RATE req/s over $CONNS connections" \
    "nginx off unsampled sampled" sampled "collector CPU-us/req"
awk -v exported="$exported" -v dropped="$dropped" -v received="$received" '
    { m50[$1] = $2; mc[$1] = $4 }
    END {
        printf "against tracing off: gateway CPU-us/req unsampled %.2fx (%+.2f), sampled %.2fx (%+.2f); added p50 sampled %+.0f us\n",
               mc["unsampled"] / mc["off"], mc["unsampled"] - mc["off"],
               mc["sampled"] / mc["off"], mc["sampled"] - mc["off"], m50["sampled"] - m50["off"]
        printf "against nginx: CPU-us/req off %.2fx, unsampled %.2fx, sampled %.2fx\n",
               mc["off"] / mc["nginx"], mc["unsampled"] / mc["nginx"], mc["sampled"] / mc["nginx"]
        printf "spans: exported %d, dropped %d, received by the collector %d\n", exported, dropped, received
    }' "$WORK_DIR/medians.txt"
[ "$dropped" = 0 ] || die "the sampled gateway dropped $dropped spans: the figure leaves work out"
