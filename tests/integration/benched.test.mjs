// A bench is a preference, not a wall (docs/resilience.md#a-bench-is-a-preference): when every
// target that could serve is benched, the least-bad one that still answers some of its calls is
// tried anyway — a lone deployment in a brown-out keeps answering — while one that is down (every
// call failing) is still skipped fast.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, closedPort, metricValue, eventually } from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock(['--seed', '11']);
  const p = mock.port;
  const down = await closedPort();
  // The shipped defaults: no retry or health settings.
  gateway = await startGateway(`
models:
  - name: brownout
    deployments: [{name: brownout, model: brownout, api_base: "http://127.0.0.1:${p}/v1"}]
  - name: down
    deployments: [{name: down, model: down, api_base: "http://127.0.0.1:${down}/v1"}]
`, { seed: 5 });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

// Each request its own (an identical body right after a give-up reads as the client's own retry:
// docs/resilience.md#one-layer-retries).
let sent = 0;
const chat = (model) =>
  request(gateway.port, { body: { model, messages: [{ role: 'user', content: `hi ${sent++}` }] } });

test('one deployment answering every other call with 529: the defaults answer at least 80 % of 40 requests', async () => {
  await mock.scenario([{ match: { model: 'brownout' }, fault: 'status=529; probability=0.5' }]);
  let answered = 0;
  let panicked = 0;
  for (let i = 0; i < 40; i++) {
    const res = await chat('brownout');
    if (res.status === 200) answered++;
    else assert.ok([503, 529].includes(res.status), res.body);  // the last 529, or benched
    if (res.headers['x-switchyard-panic']) panicked++;
  }
  assert.ok(answered >= 32, `${answered} of 40 answered`);
  // It was benched on the way, and served all the same: the answers say so.
  assert.ok(panicked > 0, 'no answer came from a benched deployment');
  const metrics = await gateway.metrics();
  assert.ok(metricValue(metrics, 'switchyard_panic_attempts_total{deployment="brownout"}') > 0);
  const upstream = (await mock.stats()).requests.filter((r) => r.model === 'brownout').length;
  // Within the retry budget: a retried brown-out costs about two calls per request, never more
  // than the class cap's four.
  assert.ok(upstream <= 40 * 3, `${upstream} upstream calls for 40 requests`);
});

test('a lone deployment that is down is still skipped fast once benched', async () => {
  const results = [];
  for (let i = 0; i < 8; i++) {
    const started = Date.now();
    const res = await chat('down');
    results.push({ status: res.status, ms: Date.now() - started, panic: res.headers['x-switchyard-panic'] });
  }
  for (const r of results) {
    assert.ok([502, 503].includes(r.status), `${r.status}`);  // refused, then benched
    assert.equal(r.panic, undefined);
  }
  assert.equal(results.at(-1).status, 503);
  // Benched after its first failures: the last requests make no attempt at all.
  // The 40 requests of the test before and these 8, in the order they were answered.
  await eventually(() => gateway.logs.length >= 48, { what: 'the access log lines' });
  const lines = [...gateway.logs].sort((a, b) => a.time.localeCompare(b.time)).slice(-8);
  for (const line of lines.slice(-3)) {
    assert.equal(line.attempts ?? 0, 0, JSON.stringify(lines.map((l) => [l.status, l.attempts, l.latency_ms])));
  }
  assert.ok(results.at(-1).ms < 200, `the last request took ${results.at(-1).ms} ms`);
});
