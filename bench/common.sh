# Shared helpers for bench/run.sh and bench/stream.sh (sourced, not executed).
# Starts the mock, nginx and Switchyard pinned as bench/README.md#protocol says, samples /proc, and
# tears everything down on exit.

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
BUILD="${BUILD:-$ROOT/build/release}"
SWITCHYARD="$BUILD/src/switchyard"
MOCK="$BUILD/tools/mock/switchyard-mock"
CLK_TCK="$(getconf CLK_TCK)"
NGINX_BIN="${NGINX_BIN:-$(command -v nginx || echo /usr/sbin/nginx)}"
# Where the proxies and the load generator run (bench/README.md#protocol).
PROXY_CPU="${PROXY_CPU:-1}"
LOAD_CPU="${LOAD_CPU:-0}"
# nginx access log: "buffered" (default; one combined line per request to /dev/null, written in
# 64 KiB batches, comparable to Switchyard's batched access log) or "off".
NGINX_ACCESS_LOG="${NGINX_ACCESS_LOG:-buffered}"
# How long to wait for someone else's compile to finish before measuring anyway.
BUSY_WAIT="${BUSY_WAIT:-900}"
# "Quiet" between runs: the whole machine under this % of one CPU busy.
QUIET_MAX="${QUIET_MAX:-10}"

STARTED_PIDS=()
WORK_DIR=""
BUSY_NOTES=()

# One benchmark at a time on this machine: two would measure each other. Waits up to BUSY_WAIT
# seconds for another run to finish. The lock is fd 9, closed for the servers we start.
acquire_lock() {
    local lock="${TMPDIR:-/tmp}/switchyard-bench.lock"
    exec 9>>"$lock"
    if ! flock -n 9; then
        log "bench: another benchmark is running ($(cat "$lock.pid" 2>/dev/null || echo '?')); waiting for it"
        flock -w "$BUSY_WAIT" 9 || die "another benchmark still holds $lock after ${BUSY_WAIT}s"
    fi
    echo "pid $$ since $(date +%H:%M:%S)" >"$lock.pid"
}

# Stops tracking a pid we have already waited for, so cleanup never signals a reused pid.
forget_pid() {
    local keep=() p
    for p in "${STARTED_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    STARTED_PIDS=("${keep[@]}")
}

log() { printf '%s\n' "$*" >&2; }
DIED=0
die() {
    log "bench: FAILED: $*"
    DIED=1
    exit 1
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ "$rc" -ne 0 ] && [ "$DIED" = 0 ] && [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ]; then
        log "bench: FAILED: a step exited with status $rc (see above)"
    fi
    local pid
    [ -z "${SAMPLER_PID:-}" ] || kill "$SAMPLER_PID" 2>/dev/null || true
    for pid in "${STARTED_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${STARTED_PIDS[@]}"; do
        # Give each a moment, then insist.
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "$WORK_DIR" ] && [ -d "$WORK_DIR" ]; then
        if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ] && [ "$rc" -ne 143 ] && [ "${KEEP_WORK_DIR:-0}" != 1 ]; then
            # Keep the logs of a failed run: they are the only way to see why.
            local keep="$RESULTS_DIR/failed-$(date +%Y%m%d-%H%M%S)"
            mkdir -p "$keep" && cp -r "$WORK_DIR"/. "$keep"/ 2>/dev/null &&
                log "bench: logs of the failed run kept in $keep"
            rm -rf "$WORK_DIR"
        elif [ "${KEEP_WORK_DIR:-0}" = 1 ]; then
            log "bench: work dir kept: $WORK_DIR"
        else
            rm -rf "$WORK_DIR"
        fi
    fi
    exit "$rc"
}

setup_traps() {
    trap cleanup EXIT
    trap 'log "bench: interrupted"; exit 130' INT
    trap 'log "bench: terminated"; exit 143' TERM
}

require_tools() {
    local t
    "$ROOT/scripts/setup.sh" bench >/dev/null
    for t in wrk taskset flock getconf ss awk sort curl "$NGINX_BIN"; do
        command -v "$t" >/dev/null 2>&1 || die "$t not found (scripts/setup.sh bench installs it)"
    done
    [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || die "needs at least 2 CPUs (proxy on CPU $PROXY_CPU, load on CPU $LOAD_CPU)"
}

build_if_missing() {
    if [ "$BUILD" != "$ROOT/build/release" ]; then
        [ -x "$SWITCHYARD" ] && [ -x "$MOCK" ] || die "BUILD=$BUILD has no switchyard and switchyard-mock"
        return 0
    fi
    if [ "${REBUILD:-0}" = 1 ] || [ ! -x "$SWITCHYARD" ] || [ ! -x "$MOCK" ]; then
        log "bench: building release binaries"
        (cd "$ROOT" && cmake --preset release >/dev/null &&
            cmake --build build/release -j2 --target switchyard switchyard-mock) >&2 ||
            die "build failed"
    fi
}

compile_running() {
    local p
    for p in cc1plus cc1 collect2 ld ninja make ctest; do
        pgrep -x "$p" >/dev/null 2>&1 && return 0
    done
    return 1
}

# CPU time used on the whole machine over one second, in % of one CPU.
system_busy_pct() {
    local a b
    a="$(awk '$1 == "cpu" {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)"
    sleep 1
    b="$(awk '$1 == "cpu" {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)"
    awk -v a="$a" -v b="$b" -v n="$(getconf _NPROCESSORS_ONLN)" 'BEGIN {
        split(a, x); split(b, y); t = (y[1] - x[1]) + (y[2] - x[2])
        printf "%.0f\n", (t > 0 ? (y[1] - x[1]) / t * n * 100 : 0) }'
}

# Waits until no build runs and the machine is quiet (our servers idle: under QUIET_MAX % of a
# CPU busy over a second), for at most BUSY_WAIT seconds. Someone else's compile or test run
# distorts the figures. Returns 1 if it gave up waiting.
WAITS=0
WAITED_SECS=0
wait_until_quiet() {
    local what="$1" start=$SECONDS busy reason
    while :; do
        if compile_running; then
            reason="a build is running"
            sleep 4
        else
            busy="$(system_busy_pct)"
            [ "$busy" -ge "$QUIET_MAX" ] || break
            reason="the machine is busy (${busy}% of a CPU)"
        fi
        if [ $((SECONDS - start)) -ge "$BUSY_WAIT" ]; then
            BUSY_NOTES+=("still busy after ${BUSY_WAIT}s ($reason); measured anyway: $what")
            return 1
        fi
        if [ "${last_reason:-}" != "$reason$what" ]; then log "bench: $reason; waiting before $what"; fi
        last_reason="$reason$what"
        sleep 1
    done
    if [ $((SECONDS - start)) -gt 1 ]; then
        WAITS=$((WAITS + 1))
        WAITED_SECS=$((WAITED_SECS + SECONDS - start))
    fi
    return 0
}

free_port() {
    local p
    for _ in $(seq 200); do
        p=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ]; then
            echo "$p"
            return 0
        fi
    done
    die "no free port found"
}

# The open-loop generator (tools/openloop), built if missing; the path in OPENLOOP.
OPENLOOP="$BUILD/tools/openloop/switchyard-openloop"
build_openloop_if_missing() {
    if [ "${REBUILD:-0}" = 1 ] || [ ! -x "$OPENLOOP" ]; then
        (cd "$ROOT" && cmake --preset release >/dev/null &&
            cmake --build build/release -j2 --target switchyard-openloop) >&2 || die "build failed"
    fi
}

# The chat request the open-loop benchmarks send, written to $WORK_DIR/body.json; prints its path.
write_open_loop_body() {
    printf '%s' '{"model":"bench","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence, please."}],"max_tokens":64}' >"$WORK_DIR/body.json"
    echo "$WORK_DIR/body.json"
}

# Runs the open loop against every target in $TARGETS, REPS times, interleaved, after a warm-up.
# The caller defines port_of, pid_of and header_of (target -> value) and alive (dies when a
# server is gone); SIDE_PID names a helper process (Redis, a collector) whose CPU is measured
# too. Appends "rep target p50_us p99_us cpu_us_per_req side_cpu_us_per_req" lines to $RESULTS.
run_open_loop_reps() {
    local rep t pid before after side_before side_after line done_n failed cpu_us side_us
    for t in $TARGETS; do  # warm-up
        OPENLOOP_HEADER="$(header_of "$t")" taskset -c "$LOAD_CPU" "$OPENLOOP" 127.0.0.1 \
            "$(port_of "$t")" /v1/chat/completions "$BODY" "$RATE" 1 "$CONNS" >/dev/null ||
            die "$t failed during the warm-up"
    done
    for rep in $(seq "$REPS"); do
        for t in $TARGETS; do
            wait_until_quiet "$t rep $rep" || true
            alive
            pid="$(pid_of "$t")"
            before="$(cpu_ticks "$pid")"
            side_before="$(cpu_ticks "$SIDE_PID")"
            line="$(OPENLOOP_HEADER="$(header_of "$t")" taskset -c "$LOAD_CPU" "$OPENLOOP" \
                127.0.0.1 "$(port_of "$t")" /v1/chat/completions "$BODY" "$RATE" "$DURATION" \
                "$CONNS")" || die "$t: $line"
            after="$(cpu_ticks "$pid")"
            side_after="$(cpu_ticks "$SIDE_PID")"
            done_n="$(sed -n 's/.* done=\([0-9]*\).*/\1/p' <<<"$line")"
            failed="$(sed -n 's/.* failed=\([0-9]*\).*/\1/p' <<<"$line")"
            [ "${failed:-0}" = 0 ] || die "$t: $failed failed: $line"
            cpu_us="$(awk -v t=$((after - before)) -v hz="$CLK_TCK" -v n="$done_n" \
                'BEGIN { printf "%.2f", t / hz * 1e6 / n }')"
            side_us="$(awk -v t=$((side_after - side_before)) -v hz="$CLK_TCK" -v n="$done_n" \
                'BEGIN { printf "%.2f", t / hz * 1e6 / n }')"
            log "bench: rep $rep $t: $line cpu_us_per_req=$cpu_us side_cpu_us_per_req=$side_us"
            echo "$rep $t $(sed -n 's/.*p50_us=\([0-9-]*\) p90_us=[0-9-]* p99_us=\([0-9-]*\).*/\1 \2/p' \
                <<<"$line") $cpu_us $side_us" >>"$RESULTS"
        done
    done
}

# Summarises $RESULTS (run_open_loop_reps): per target in NAMES, the medians over the reps of
# the latency added over direct (p50, p99), the CPU per request, and the side process's CPU per
# request (shown for SIDE_TARGET only, headed SIDE_LABEL). Prints the table under TITLE and writes
# "target m50 m99 cpu side" lines to $WORK_DIR/medians.txt for the ratios a script prints.
print_open_loop_table() {
    local title="$1" names="$2" side_target="$3" side_label="$4"
    awk -v title="$title" -v names="$names" -v side_target="$side_target" \
        -v side_label="$side_label" -v out="$WORK_DIR/medians.txt" '
    function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { p50[$1, $2] = $3; p99[$1, $2] = $4; cpu[$1, $2] = $5; side[$1, $2] = $6; reps[$1] = 1 }
    END {
        n = 0; for (r in reps) n++
        k = split(names, list, " ")
        printf "%s; medians of %d reps\n", title, n
        printf "%-10s %14s %14s %14s %22s\n", "", "added p50 us", "added p99 us", "CPU-us/req", side_label
        printf "" > out
        for (i = 1; i <= k; i++) {
            t = list[i]
            for (r = 1; r <= n; r++) {
                a50[r] = p50[r, t] - p50[r, "direct"]; a99[r] = p99[r, t] - p99[r, "direct"]
                c[r] = cpu[r, t]; s[r] = side[r, t]
            }
            m50 = median(a50, n); m99 = median(a99, n); mc = median(c, n); ms = median(s, n)
            printf "%-10s %14.0f %14.0f %14.2f %22.2f\n", t, m50, m99, mc, (t == side_target ? ms : 0)
            printf "%s %f %f %f %f\n", t, m50, m99, mc, ms >> out
        }
    }' "$RESULTS"
}

# Waits for a regex to appear in a file (a process's startup line); prints the match.
wait_for_line() {
    local file="$1" regex="$2" pid="$3" what="$4"
    for _ in $(seq 100); do
        if grep -Eo "$regex" "$file" 2>/dev/null | head -1 | grep -q .; then
            grep -Eo "$regex" "$file" | head -1
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || { cat "$file" >&2; die "$what exited during startup"; }
        sleep 0.1
    done
    die "$what did not report listening within 10s"
}

start_mock() {
    taskset -c "$LOAD_CPU" "$MOCK" --listen 127.0.0.1:0 --threads 1 \
        >"$WORK_DIR/mock.out" 2>"$WORK_DIR/mock.err" 9>&- &
    MOCK_PID=$!
    STARTED_PIDS+=("$MOCK_PID")
    local line
    line="$(wait_for_line "$WORK_DIR/mock.out" 'listening on 127\.0\.0\.1:[0-9]+' "$MOCK_PID" mock)"
    MOCK_PORT="${line##*:}"
}

start_nginx() {
    NGINX_PORT="$(free_port)"
    local d="$WORK_DIR/nginx"
    mkdir -p "$d/logs" "$d/tmp"
    local access
    case "$NGINX_ACCESS_LOG" in
        buffered) access="access_log /dev/null combined buffer=64k flush=100ms;" ;;
        off) access="access_log off;" ;;
        *) die "NGINX_ACCESS_LOG must be buffered or off" ;;
    esac
    cat >"$d/nginx.conf" <<EOF
worker_processes 1;
pid $d/nginx.pid;
error_log $d/logs/error.log warn;
events { worker_connections 4096; }
http {
    $access
    client_body_temp_path $d/tmp/client_body;
    proxy_temp_path $d/tmp/proxy;
    fastcgi_temp_path $d/tmp/fastcgi;
    uwsgi_temp_path $d/tmp/uwsgi;
    scgi_temp_path $d/tmp/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    upstream mock {
        server 127.0.0.1:$MOCK_PORT;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            proxy_pass http://mock;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
    }
}
EOF
    # Under a PROXY_WRAP (bench/instructions.sh: valgrind) nginx is one process, its own worker.
    local globals='daemon off;'
    [ -z "${PROXY_WRAP:-}" ] || globals='daemon off; master_process off;'
    # shellcheck disable=SC2086 # PROXY_WRAP is a command line
    taskset -c "$PROXY_CPU" ${PROXY_WRAP:-} "$NGINX_BIN" -p "$d" -c "$d/nginx.conf" -g "$globals" \
        >"$d/logs/stdout.log" 2>"$d/logs/stderr.log" 9>&- &
    NGINX_PID=$!
    STARTED_PIDS+=("$NGINX_PID")
    NGINX_WORKER_PID=""
    for _ in $(seq 100); do
        kill -0 "$NGINX_PID" 2>/dev/null || { cat "$d/logs/stderr.log" "$d/logs/error.log" >&2 2>/dev/null; die "nginx exited during startup"; }
        if [ -n "${PROXY_WRAP:-}" ]; then
            NGINX_WORKER_PID="$NGINX_PID"
        else
            NGINX_WORKER_PID="$(pgrep -P "$NGINX_PID" | head -1 || true)"
        fi
        if [ -n "$NGINX_WORKER_PID" ] && [ -n "$(ss -Htln "sport = :$NGINX_PORT")" ]; then break; fi
        sleep 0.1
    done
    [ -n "$NGINX_WORKER_PID" ] || die "nginx worker did not start"
}

start_switchyard() {
    cat >"$WORK_DIR/switchyard.yaml" <<EOF
server: {listen: "127.0.0.1:0", workers: 1}
log: {access: stdout}
models:
  - name: bench
    deployments:
      - {provider: openai, model: bench, api_base: "http://127.0.0.1:$MOCK_PORT/v1"}
  - name: bench-rewrite
    deployments:
      - {provider: openai, model: bench-upstream, api_base: "http://127.0.0.1:$MOCK_PORT/v1"}
EOF
    # Access logging stays on (the default), written to /dev/null: its cost is part of the figure.
    # shellcheck disable=SC2086 # PROXY_WRAP is a command line
    SWITCHYARD_DATA_DIR="$WORK_DIR" taskset -c "$PROXY_CPU" ${PROXY_WRAP:-} "$SWITCHYARD" serve --config "$WORK_DIR/switchyard.yaml" --workers 1 \
        >/dev/null 2>"$WORK_DIR/switchyard.err" 9>&- &
    SWITCHYARD_PID=$!
    STARTED_PIDS+=("$SWITCHYARD_PID")
    local line
    line="$(wait_for_line "$WORK_DIR/switchyard.err" 'listening on 127\.0\.0\.1:[0-9]+' "$SWITCHYARD_PID" switchyard)"
    SWITCHYARD_PORT="${line##*:}"
    # What runs, taken now (the running image itself): the file may be rebuilt meanwhile.
    SWITCHYARD_BUILT="$(date -u -r "$SWITCHYARD" +%Y-%m-%dT%H:%M:%SZ)"
    SWITCHYARD_SHA="$(sha256sum "/proc/$SWITCHYARD_PID/exe" | cut -c1-12)"
    REPO_HEAD="$(git -C "$ROOT" log -1 --format='%h (%cI)' 2>/dev/null || echo '?')"
    REPO_DIRTY="$(git -C "$ROOT" status --porcelain -- src tools 2>/dev/null | head -1)"
}

# Dies naming whichever of our servers is gone, with the end of its stderr: a crash, or someone
# else killing it, must not pass for a figure.
check_alive() {
    local name pid errf
    for name in mock nginx-worker switchyard; do
        case "$name" in
            mock) pid="$MOCK_PID"; errf="$WORK_DIR/mock.err" ;;
            nginx-worker) pid="$NGINX_WORKER_PID"; errf="$WORK_DIR/nginx/logs/error.log" ;;
            switchyard) pid="$SWITCHYARD_PID"; errf="$WORK_DIR/switchyard.err" ;;
        esac
        if ! kill -0 "$pid" 2>/dev/null; then
            log "bench: $name (pid $pid) is gone; the end of its log:"
            tail -5 "$errf" >&2 2>/dev/null || true
            die "$name exited during the benchmark$(grep -q 'signal 15' "$errf" 2>/dev/null && echo ' (SIGTERM from outside this script)')"
        fi
    done
}

# utime+stime of a process (all its threads), in clock ticks.
cpu_ticks() {
    # The command name (field 2) may hold spaces; cut after the closing parenthesis.
    local s
    s="$(cat "/proc/$1/stat" 2>/dev/null)" || die "process $1 is gone"
    s="${s##*) }"
    # Now field 1 is the state (field 3 of stat): utime and stime are fields 12 and 13 here.
    awk '{print $12 + $13}' <<<"$s"
}

# VmRSS in KiB (no fork: the sampler calls this four times a second).
rss_kb() {
    local k v _
    while read -r k v _; do
        if [ "$k" = VmRSS: ]; then echo "$v"; return 0; fi
    done <"/proc/$1/status" 2>/dev/null
    echo 0
}

# utime+stime of this shell's waited-for children (cutime+cstime): wrk's CPU, read around it.
child_ticks() {
    local s
    s="$(cat "/proc/$$/stat")"
    s="${s##*) }"
    awk '{print $14 + $15}' <<<"$s"
}

# "busy idle steal" ticks of one CPU from /proc/stat.
cpu_line() {
    awk -v c="cpu$1" '$1 == c {print $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat
}

# Samples the peak VmRSS of a pid into a file until the stop file appears.
rss_sampler() {
    local pid="$1" out="$2" stop="$3" peak=0 v
    # Also stops if the work dir or the process disappears (interrupted run).
    while [ ! -e "$stop" ] && [ -d "${stop%/*}" ] && kill -0 "$pid" 2>/dev/null; do
        v="$(rss_kb "$pid")"
        if [ "${v:-0}" -gt "$peak" ]; then peak="$v"; echo "$peak" >"$out"; fi
        sleep 0.25
    done
    echo "$peak" >"$out"
}

# One POST through a target; checks the status and that the mock answered.
smoke_check() {
    local name="$1" url="$2" model="$3" body
    body="$(curl -s -m 5 -o - -w '\n%{http_code}' "$url" -H 'Content-Type: application/json' \
        -d "{\"model\":\"$model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")" ||
        die "smoke check $name: curl failed"
    local code="${body##*$'\n'}"
    [ "$code" = 200 ] || die "smoke check $name: HTTP $code: ${body%$'\n'*}"
    grep -q '"Mock reply from' <<<"$body" || die "smoke check $name: unexpected body: $body"
}

machine_facts() {
    echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r), $(awk '/^MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
    echo "tools: $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}'), $("$NGINX_BIN" -v 2>&1 | sed 's/.*version: //'), $("$SWITCHYARD" --version 2>&1 | head -1)"
    local where
    if [ "$BUILD" = "$ROOT/build/release" ]; then
        where="from this checkout; repo HEAD at start $REPO_HEAD${REPO_DIRTY:+, src/tools had uncommitted changes}"
    else
        where="from the sources in $(cd "$BUILD/../.." && pwd) (BUILD set)"
    fi
    echo "binary: $SWITCHYARD (sha256 $SWITCHYARD_SHA) built $SWITCHYARD_BUILT $where"
    if [ "$(sha256sum "$SWITCHYARD" 2>/dev/null | cut -c1-12)" != "$SWITCHYARD_SHA" ]; then
        echo "binary: NOTE the file was rebuilt during the run; the figures are for the binary started (sha256 $SWITCHYARD_SHA)"
    fi
}

# Busy fraction of both CPUs over a quiet second, before any load: shows other activity.
idle_check() {
    local a0 a1 b0 b1
    a0="$(cpu_line 0)"; a1="$(cpu_line 1)"
    sleep 1
    b0="$(cpu_line 0)"; b1="$(cpu_line 1)"
    awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" 'BEGIN {
        split(a0, x); split(b0, y); u0 = (y[1]-x[1]) / ((y[1]-x[1]) + (y[2]-x[2]) + 1e-9) * 100
        split(a1, x); split(b1, y); u1 = (y[1]-x[1]) / ((y[1]-x[1]) + (y[2]-x[2]) + 1e-9) * 100
        printf "%.0f %.0f\n", u0, u1 }'
}
