// Traces over OTLP/HTTP to a small collector on loopback: a request that retried and fell back is
// one trace with a server span, a client span per attempt and a span per wait, continuing the
// client's traceparent, with the GenAI and Switchyard attributes, and the upstream sees the
// attempt's span as its parent. Unsampled parents are not recorded; a collector that is down
// costs nothing but counted drops.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startMock, startGateway, request, metricValue, sleep, closedPort, eventually,
} from './harness.mjs';

const started = [];
after(async () => {
  for (const s of started.reverse()) await s.stop();
});

// An OTLP/HTTP receiver: keeps every span of every JSON export request.
async function startCollector() {
  const spans = [];
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ path: req.url, headers: req.headers });
      const resource = JSON.parse(body).resourceSpans[0];
      const service = resource.resource.attributes.find((a) => a.key === 'service.name');
      for (const span of resource.scopeSpans[0].spans) {
        spans.push({ ...span, service: service.value.stringValue });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const collector = {
    port: server.address().port,
    spans,
    requests,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
    },
  };
  started.push(collector);
  return collector;
}

const attr = (span, key) => {
  const a = span.attributes.find((x) => x.key === key);
  if (!a) return undefined;
  const v = a.value;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue ?? v.boolValue);
};

// The spans of `traceId` once `count` of them arrived; after 5 s, those that did (the assertions
// that follow say what is missing).
async function spansOf(collector, traceId, count) {
  const found = () => collector.spans.filter((s) => s.traceId === traceId);
  await eventually(() => found().length >= count,
                   { what: `${count} spans of trace ${traceId}`, timeoutMs: 5000, intervalMs: 50 })
    .catch(() => {});
  return found();
}

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';

test('a request that retried and fell back is one trace: attempts and waits under the request span', async () => {
  const collector = await startCollector();
  const mock = await startMock();
  started.push(mock);
  await mock.scenario([{ match: { model: 'a1' }, fault: 'status=529' }]);
  const gateway = await startGateway(`
telemetry:
  otlp_endpoint: "http://127.0.0.1:${collector.port}"
  service_name: gateway-under-test
  export_interval_ms: 50
  headers: {x-collector-key: os.environ/COLLECTOR_KEY}
retry: {max_attempts: 3, base_ms: 200, cap_ms: 200}
models:
  - name: a
    deployments: [{name: a1, model: a1, api_base: "http://127.0.0.1:${mock.port}/v1"}]
    fallbacks: [b]
  - name: b
    deployments: [{name: b1, model: b1, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`, { env: { COLLECTOR_KEY: 'collector-secret-123' }, workers: 1, seed: 7 });
  started.push(gateway);

  const res = await request(gateway.port, {
    body: { model: 'a', messages: [{ role: 'user', content: 'Hello' }] },
    headers: { traceparent: `00-${TRACE}-${PARENT}-01` },
  });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'b');

  const spans = await spansOf(collector, TRACE, 5);
  const root = spans.find((s) => s.kind === 2);
  assert.ok(root, 'a server span');
  assert.equal(root.parentSpanId, PARENT, 'the client span is its parent');
  assert.equal(root.service, 'gateway-under-test');
  assert.equal(root.name, 'chat a');
  assert.equal(attr(root, 'gen_ai.request.model'), 'a');
  assert.equal(attr(root, 'gen_ai.response.model'), 'b1');
  assert.equal(attr(root, 'switchyard.model_group'), 'b');
  assert.equal(attr(root, 'switchyard.deployment'), 'b1');
  assert.equal(attr(root, 'switchyard.attempts'), 3);
  assert.equal(attr(root, 'switchyard.fallback_depth'), 1);
  assert.equal(attr(root, 'http.response.status_code'), 200);
  assert.ok(attr(root, 'gen_ai.usage.output_tokens') > 0);
  assert.equal(root.status, undefined, 'a served request is no error');

  const attempts = spans.filter((s) => s.kind === 3)
    .sort((x, y) => Number(BigInt(x.startTimeUnixNano) - BigInt(y.startTimeUnixNano)));
  const waits = spans.filter((s) => s.name === 'switchyard.wait');
  const seen = JSON.stringify(spans.map((s) => [s.name, attr(s, 'switchyard.deployment'),
    attr(s, 'switchyard.wait.reason'), attr(s, 'switchyard.wait_ms'), s.startTimeUnixNano]));
  assert.equal(attempts.length, 3, `one client span per attempt: ${seen}`);
  // Full jitter draws a backoff in [0, 200) ms; with the gateway's draws seeded (one worker,
  // seed 7) the draw is the same every run, and not 0: the backoff is a wait span.
  assert.equal(waits.length, 1, `the backoff before the retry is a span: ${seen}`);
  for (const s of [...attempts, ...waits]) {
    assert.equal(s.parentSpanId, root.spanId, `${s.name} is a child of the request span`);
    assert.ok(BigInt(s.startTimeUnixNano) >= BigInt(root.startTimeUnixNano));
    assert.ok(BigInt(s.endTimeUnixNano) <= BigInt(root.endTimeUnixNano));
    assert.ok(BigInt(s.startTimeUnixNano) <= BigInt(s.endTimeUnixNano));
  }
  assert.deepEqual(attempts.map((s) => attr(s, 'switchyard.deployment')), ['a1', 'a1', 'b1']);
  assert.deepEqual(attempts.map((s) => attr(s, 'switchyard.error_class')),
                   ['overloaded', 'overloaded', 'none']);
  assert.deepEqual(attempts.map((s) => attr(s, 'switchyard.retry')), [false, true, true]);
  assert.deepEqual(attempts.map((s) => attr(s, 'switchyard.fallback_depth')), [0, 0, 1]);
  assert.deepEqual(attempts.map((s) => attr(s, 'http.response.status_code')), [529, 529, 200]);
  assert.equal(attr(attempts[0], 'gen_ai.system'), 'openai');
  assert.equal(attr(attempts[0], 'error.type'), 'overloaded');
  assert.equal(attempts[0].status.code, 2);
  assert.equal(attempts[2].status, undefined);
  assert.ok(attr(attempts[2], 'switchyard.upstream_request_id'), 'the provider\'s request id');
  // Attempts and waits do not overlap: the wait lies between the two attempts on a1.
  for (const wait of waits) {
    assert.ok(BigInt(wait.startTimeUnixNano) >= BigInt(attempts[0].endTimeUnixNano));
    assert.ok(BigInt(wait.endTimeUnixNano) <= BigInt(attempts[1].startTimeUnixNano));
    assert.equal(attr(wait, 'switchyard.wait.reason'), 'backoff');
    assert.ok(attr(wait, 'switchyard.wait_ms') >= 1);
  }

  // The upstream saw each attempt's span as its parent, in the client's trace.
  const log = (await mock.stats()).requests;
  assert.deepEqual(log.map((r) => r.headers.traceparent),
                   attempts.map((s) => `00-${TRACE}-${s.spanId}-01`));
  // The collector got the configured header; the secret is in no log.
  assert.ok(collector.requests.every((r) => r.headers['x-collector-key'] === 'collector-secret-123'));
  assert.ok(collector.requests.every((r) => r.path === '/v1/traces'));
  assert.ok(!gateway.stderr().includes('collector-secret-123'));
  const text = await gateway.metrics();
  assert.ok(metricValue(text, 'switchyard_trace_spans_exported_total') >= 5);
});

test('an unsampled parent is not recorded but passed on; without one the sample ratio decides', async () => {
  const collector = await startCollector();
  const mock = await startMock();
  started.push(mock);
  const gateway = await startGateway(`
telemetry: {otlp_endpoint: "http://127.0.0.1:${collector.port}/v1/traces", sample_ratio: 0, export_interval_ms: 50}
models:
  - name: a
    deployments: [{name: a1, model: a1, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  started.push(gateway);
  const unsampled = `00-${TRACE}-${PARENT}-00`;
  let res = await request(gateway.port, {
    body: { model: 'a', messages: [{ role: 'user', content: 'Hello' }] },
    headers: { traceparent: unsampled },
  });
  assert.equal(res.status, 200);
  // Ratio 0: a request without a parent is not traced either.
  res = await request(gateway.port, { body: { model: 'a', messages: [{ role: 'user', content: 'x' }] } });
  assert.equal(res.status, 200);
  // A sampled parent is recorded whatever the ratio.
  const sampledTrace = '1'.repeat(32);
  res = await request(gateway.port, {
    body: { model: 'a', messages: [{ role: 'user', content: 'Hello' }] },
    headers: { traceparent: `00-${sampledTrace}-${PARENT}-01` },
  });
  assert.equal(res.status, 200);
  const recorded = await spansOf(collector, sampledTrace, 2);
  assert.equal(recorded.length, 2, 'request and attempt');
  // A negative check: four more export intervals (50 ms) bring nothing else.
  await sleep(200);
  assert.equal(collector.spans.length, 2, 'nothing else was recorded');
  const log = (await mock.stats()).requests;
  assert.equal(log[0].headers.traceparent, unsampled, 'passed on unchanged');
  assert.equal(log[1].headers.traceparent, undefined);
  // A malformed traceparent is ignored, never an error.
  res = await request(gateway.port, {
    body: { model: 'a', messages: [{ role: 'user', content: 'Hello' }] },
    headers: { traceparent: `00-${'0'.repeat(32)}-${PARENT}-01` },
  });
  assert.equal(res.status, 200);
  assert.equal((await mock.stats()).requests[3].headers.traceparent, undefined);
});

test('a collector that is down costs requests nothing: spans are dropped and counted', async () => {
  const mock = await startMock();
  started.push(mock);
  const gateway = await startGateway(`
telemetry: {otlp_endpoint: "http://127.0.0.1:${await closedPort()}", export_interval_ms: 50, export_timeout_ms: 200}
models:
  - name: a
    deployments: [{name: a1, model: a1, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  started.push(gateway);
  for (let i = 0; i < 20; i++) {
    const res = await request(gateway.port, { body: { model: 'a', messages: [{ role: 'user', content: 'x' }] } });
    assert.equal(res.status, 200);
  }
  let dropped = 0;
  await eventually(async () => {
    dropped = metricValue(await gateway.metrics(),
                          'switchyard_trace_spans_dropped_total{reason="export"}') ?? 0;
    return dropped >= 40;
  }, { what: '40 spans counted as dropped', intervalMs: 50 }).catch(() => {});
  assert.equal(dropped, 40, 'two spans per request, all counted');
  assert.match(gateway.stderr(), /"event":"trace_export_failed"/);
  assert.equal(gateway.stderr().match(/trace_export_failed/g).length, 1, 'one line per episode');
});
