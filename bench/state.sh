#!/usr/bin/env bash
# What state costs: the same keyed, self-throttled request through Switchyard with its state in
# memory, in memory with the durable SQLite store (the default), and in Redis (docs/state.md),
# next to direct and nginx, in one run. Open loop (RATE per second over CONNS keep-alive connections), interleaved, REPS times.
# Each keyed request makes one Redis round trip at admission (its key's RPM and TPM window) and
# one per attempt (its deployment's headroom buckets), and two writes without waiting (the
# key's settlement and the headroom's). Prints added p50/p99 over direct, the gateway's CPU per
# request, Redis's CPU per request, and the ratios sqlite/memory, redis/memory and against nginx.
#   bench/state.sh                          # RATE=2000 CONNS=32 DURATION=5 REPS=3
set -euo pipefail
source "$(dirname "$0")/common.sh"

RATE="${RATE:-2000}"
CONNS="${CONNS:-32}"
DURATION="${DURATION:-5}"
REPS="${REPS:-3}"
TARGETS="direct nginx memory sqlite redis"
KEY="bench-client-key-0123456789abcdef"

setup_traps
require_tools
command -v redis-server >/dev/null || die "redis-server is missing (scripts/setup.sh bench installs it)"
acquire_lock
build_if_missing
build_openloop_if_missing
taskset -pc "$LOAD_CPU" $$ >/dev/null
WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/switchyard-bench.XXXXXX")"
start_mock
start_nginx

# Redis runs beside the load generator and the mock: its CPU is measured on its own.
REDIS_PORT="$(free_port)"
taskset -c "$LOAD_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$WORK_DIR" >"$WORK_DIR/redis.out" 2>&1 9>&- &
REDIS_PID=$!
STARTED_PIDS+=("$REDIS_PID")
wait_for_line "$WORK_DIR/redis.out" 'Ready to accept connections' "$REDIS_PID" redis-server >/dev/null

# The same config for both gateways but for its state section. The limits are far above the
# load: every request reserves headroom and counts against its key, none waits.
start_gateway() {
    local name="$1" state="$2"
    cat >"$WORK_DIR/$name.yaml" <<EOF
server: {workers: 1}
log: {access: stdout}
state: $state
keys: [{name: bench, key: os.environ/BENCH_KEY, rpm: 100000000, tpm: 1000000000000}]
models:
  - name: bench
    deployments:
      - {provider: openai, model: bench, api_base: "http://127.0.0.1:$MOCK_PORT/v1",
         limits: {rpm: 100000000, tpm: 1000000000000}}
EOF
    BENCH_KEY="$KEY" taskset -c "$PROXY_CPU" "$SWITCHYARD" serve --config "$WORK_DIR/$name.yaml" \
        --listen 127.0.0.1:0 --workers 1 >/dev/null 2>"$WORK_DIR/$name.err" 9>&- &
    local pid=$!
    STARTED_PIDS+=("$pid")
    local line
    line="$(wait_for_line "$WORK_DIR/$name.err" 'listening on 127\.0\.0\.1:[0-9]+' "$pid" "$name")"
    eval "GW_${name^^}_PID=$pid; GW_${name^^}_PORT=${line##*:}"
}
start_gateway memory "{backend: memory}"
# The durable store (the default): each key's month is written once a second off the request path.
start_gateway sqlite "{backend: sqlite, path: \"$WORK_DIR/state.db\"}"
start_gateway redis "{backend: redis, url: \"redis://127.0.0.1:$REDIS_PORT/0\", timeout_ms: 50}"

BODY="$(write_open_loop_body)"

port_of() {
    case "$1" in
        direct) echo "$MOCK_PORT" ;;
        nginx) echo "$NGINX_PORT" ;;
        memory) echo "$GW_MEMORY_PORT" ;;
        sqlite) echo "$GW_SQLITE_PORT" ;;
        redis) echo "$GW_REDIS_PORT" ;;
    esac
}
pid_of() {
    case "$1" in
        direct) echo "$MOCK_PID" ;;
        nginx) echo "$NGINX_WORKER_PID" ;;
        memory) echo "$GW_MEMORY_PID" ;;
        sqlite) echo "$GW_SQLITE_PID" ;;
        redis) echo "$GW_REDIS_PID" ;;
    esac
}
header_of() {
    case "$1" in
        memory | sqlite | redis) echo "Authorization: Bearer $KEY" ;;
        *) echo "" ;;
    esac
}
alive() {
    for pid in "$MOCK_PID" "$NGINX_WORKER_PID" "$GW_MEMORY_PID" "$GW_SQLITE_PID" "$GW_REDIS_PID" \
        "$REDIS_PID"; do
        kill -0 "$pid" 2>/dev/null || die "a server (pid $pid) exited during the benchmark"
    done
}

# Every keyed request must really go through Redis: the smoke request's key admission is shared.
for t in memory sqlite redis; do
    code="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" \
        -H 'content-type: application/json' --data-binary @"$BODY" \
        "http://127.0.0.1:$(port_of "$t")/v1/chat/completions")"
    [ "$code" = 200 ] || die "$t answered $code to the smoke request"
done
[ -n "$(redis-cli -p "$REDIS_PORT" --scan --pattern '*requests*' | head -1)" ] ||
    die "the redis gateway left no key window in Redis"

RESULTS="$WORK_DIR/results.txt"
: >"$RESULTS"
log "bench: shared state, open loop, $RATE req/s over $CONNS connections, ${DURATION}s per target, $REPS reps"
SIDE_PID="$REDIS_PID"
run_open_loop_reps
fallbacks="$(curl -s "http://127.0.0.1:$(port_of redis)/metrics" | awk '/^switchyard_state_fallbacks_total/ {s += $2} END {print s + 0}')"

print_open_loop_table "shared state, open loop, $RATE req/s over $CONNS connections" \
    "nginx memory sqlite redis" redis "redis CPU-us/req"
awk -v fallbacks="$fallbacks" '
    { m50[$1] = $2; m99[$1] = $3; mc[$1] = $4 }
    END {
        printf "sqlite / memory: added p50 %.2fx (+%.0f us), gateway CPU-us/req %.2fx (+%.2f)\n",
               m50["sqlite"] / m50["memory"], m50["sqlite"] - m50["memory"],
               mc["sqlite"] / mc["memory"], mc["sqlite"] - mc["memory"]
        printf "redis / memory: added p50 %.2fx (+%.0f us), added p99 %.2fx (+%.0f us), gateway CPU-us/req %.2fx (+%.2f)\n",
               m50["redis"] / m50["memory"], m50["redis"] - m50["memory"],
               m99["redis"] / m99["memory"], m99["redis"] - m99["memory"],
               mc["redis"] / mc["memory"], mc["redis"] - mc["memory"]
        printf "against nginx: memory CPU-us/req %.2fx, redis %.2fx; added p50 memory %.2fx, redis %.2fx\n",
               mc["memory"] / mc["nginx"], mc["redis"] / mc["nginx"], m50["memory"] / m50["nginx"], m50["redis"] / m50["nginx"]
        printf "state fallbacks during the run (must be 0): %d\n", fallbacks
    }' "$WORK_DIR/medians.txt"
[ "$fallbacks" = 0 ] || die "the redis gateway decided $fallbacks operations locally: the figure is not Redis's"
