-- wrk script for the Switchyard benchmarks: posts a small chat completion and prints one
-- machine-readable line from done() with exact percentiles (microseconds) and the error counts.
--
-- Environment:
--   BENCH_MODEL   the "model" of the request body (default "bench")
--   BENCH_STREAM  "1" asks for an SSE stream and counts the frames received (this adds a
--                 response() hook, which costs wrk CPU; used by stream.sh only)

local model = os.getenv("BENCH_MODEL") or "bench"
local stream = os.getenv("BENCH_STREAM") == "1"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer sk-bench"
wrk.body = '{"model":"' .. model .. '",' ..
    (stream and '"stream":true,' or '') ..
    '"messages":[{"role":"system","content":"You are a terse assistant."},' ..
    '{"role":"user","content":"Summarise the benchmark protocol for an LLM gateway in one sentence."}],' ..
    '"max_tokens":32,"temperature":0}'

-- Per-thread counters, read back in done() through the thread objects.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

if stream then
    frames = 0
    done_markers = 0
    responses = 0

    function response(status, headers, body)
        responses = responses + 1
        local n = 0
        for _ in string.gmatch(body, "data: ") do n = n + 1 end
        frames = frames + n
        if string.find(body, "data: [DONE]", 1, true) then done_markers = done_markers + 1 end
    end
end

function done(summary, latency, requests)
    local frames_total, done_total, responses_total = 0, 0, 0
    for _, t in ipairs(threads) do
        frames_total = frames_total + (t:get("frames") or 0)
        done_total = done_total + (t:get("done_markers") or 0)
        responses_total = responses_total + (t:get("responses") or 0)
    end
    local e = summary.errors
    io.write(string.format(
        "BENCH requests=%d duration_us=%d bytes=%d body_bytes=%d mean_us=%.1f p50_us=%.0f " ..
        "p90_us=%.0f p99_us=%.0f p999_us=%.0f max_us=%.0f connect=%d read=%d write=%d " ..
        "status=%d timeout=%d frames=%d done_markers=%d responses=%d\n",
        summary.requests, summary.duration, summary.bytes, #wrk.body, latency.mean,
        latency:percentile(50), latency:percentile(90), latency:percentile(99),
        latency:percentile(99.9), latency.max, e.connect, e.read, e.write, e.status, e.timeout,
        frames_total, done_total, responses_total))
end
